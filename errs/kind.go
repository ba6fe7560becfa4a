package errs

import "strconv"

// Kind is the class of an error: what went wrong, so a caller knows what
// to do about it. The query's fault (fix the statement): Syntax,
// UnknownName, Semantic, Type; fsql's limit: Unsupported; the data's:
// Execution, IO, Conflict; the machine's: Resources; the caller's:
// Cancelled; a bug: Internal.
//
// A Kind is an error too, so it is a target for errors.Is:
// errors.Is(err, errs.Unsupported) holds for every error of that kind.
// The zero Kind is no kind (KindOf of nil or of an unclassified error).
type Kind int

const (
	_ Kind = iota
	// Syntax: the statement does not parse. The parser's MySQL number is
	// kept (ER_PARSE_ERROR, 1064, unless the parser says otherwise), with
	// the line and column.
	Syntax
	// UnknownName: a table, column, function, window or database that
	// does not exist.
	UnknownName
	// Semantic: the statement parses and its names resolve, but it is not
	// a valid query: an ambiguous column, an aggregate in WHERE, a column
	// neither grouped nor aggregated, UNION branches of different widths,
	// a subquery of two columns where one is expected, a bad window frame.
	Semantic
	// Type: a function, operator or cast applied to arguments of the
	// wrong number or types.
	Type
	// Unsupported: valid MySQL that fsql does not run (yet), or a file
	// feature its readers do not handle. The message names the construct.
	Unsupported
	// Execution: the query is valid but its data makes it fail: a value
	// out of range, a string that does not convert, a scalar subquery
	// that returns more than one row.
	Execution
	// IO: reading the data failed: a missing or unreadable file or
	// folder, a file that is not Parquet, corrupt Parquet, bad CSV.
	IO
	// Conflict: a data file changed while the query ran (rewritten,
	// truncated, replaced). Running the query again reads the new version.
	Conflict
	// Resources: the query exceeds a limit: the memory budget, the
	// nesting depth, the number of tables, the statement length.
	Resources
	// Cancelled: the caller's context was cancelled or its deadline
	// passed.
	Cancelled
	// Internal: a bug in fsql. The message says what broke.
	Internal

	numKinds
)

// info is what each kind carries: its default condition, the text of the
// Kind as an error, and the prefix its messages get (Internal and
// Unsupported messages name only the thing; the prefix says what about it).
var info = [numKinds]struct {
	name, text, prefix string
	def                Condition
}{
	Syntax:      {"Syntax", "syntax error", "", ErParseError},
	UnknownName: {"UnknownName", "unknown name", "", ErBadFieldError},
	Semantic:    {"Semantic", "invalid query", "", ErSyntaxError},
	Type:        {"Type", "type error", "", ErWrongArguments},
	Unsupported: {"Unsupported", "not supported", "not supported: ", ErNotSupportedYet},
	Execution:   {"Execution", "execution error", "", erExecution},
	IO:          {"IO", "I/O error", "", ErErrorOnRead},
	Conflict:    {"Conflict", "data changed during the query", "", ErTableDefChanged},
	Resources:   {"Resources", "resources exhausted", "", ErOutOfResources},
	Cancelled:   {"Cancelled", "cancelled", "", ErQueryInterrupted},
	Internal:    {"Internal", "internal error", "internal error: ", ErUnknownError},
}

func (k Kind) valid() bool { return k > 0 && k < numKinds }

// Error is the kind's text, so fmt.Errorf("%w: ...", kind) reads well and
// errors.Is(err, kind) finds the kind.
func (k Kind) Error() string {
	if !k.valid() {
		return "no kind"
	}
	return info[k].text
}

// String is the kind's Go name (Syntax, UnknownName, ...), for tests and
// logs; fmt prints a Kind with Error.
func (k Kind) String() string {
	if !k.valid() {
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
	return info[k].name
}

// Condition is the kind's default MySQL condition: the number and
// SQLSTATE its errors carry unless they name a more specific one.
func (k Kind) Condition() Condition {
	if !k.valid() {
		return ErUnknownError
	}
	return info[k].def
}

// Kinds lists every kind, in declaration order.
func Kinds() []Kind {
	out := make([]Kind, 0, numKinds-1)
	for k := Syntax; k < numKinds; k++ {
		out = append(out, k)
	}
	return out
}

func (k Kind) condition() Condition { return k.Condition() }
