package errs

// Condition is one MySQL error fsql reports: its number, SQLSTATE and
// symbol as MySQL's server error reference lists them, and the Kind it
// belongs to. Each Kind has a default condition; the ones below are the
// cases where MySQL has a well-known number of their own, so a MySQL
// client or driver that tests for, say, 1146 sees what it expects.
//
// A Condition is an error target too: errors.Is(err, errs.ErNoSuchTable)
// holds for every error carrying number 1146.
type Condition struct {
	Kind     Kind
	Code     int    // MySQL error number
	SQLState string // five characters; "HY000" where MySQL maps none
	Name     string // MySQL's symbol, ER_...
}

func (c Condition) condition() Condition { return c }

// Error is the MySQL symbol; errors are made with New, which takes a
// Condition, rather than by wrapping one.
func (c Condition) Error() string { return c.Name }

// Class is what New and Wrap classify an error by: a Kind (with its
// default condition) or a specific Condition.
type Class interface {
	condition() Condition
}

// Syntax.
var (
	ErParseError = Condition{Syntax, 1064, "42000", "ER_PARSE_ERROR"}
	ErEmptyQuery = Condition{Syntax, 1065, "42000", "ER_EMPTY_QUERY"}
)

// UnknownName.
var (
	ErBadFieldError = Condition{UnknownName, 1054, "42S22", "ER_BAD_FIELD_ERROR"}
	ErNoSuchTable   = Condition{UnknownName, 1146, "42S02", "ER_NO_SUCH_TABLE"}
	ErBadTableError = Condition{UnknownName, 1051, "42S02", "ER_BAD_TABLE_ERROR"}
	ErBadDBError    = Condition{UnknownName, 1049, "42000", "ER_BAD_DB_ERROR"}
	// ErUnknownSystemVariable: a SET or --set key fsql does not have.
	ErUnknownSystemVariable = Condition{UnknownName, 1193, "HY000", "ER_UNKNOWN_SYSTEM_VARIABLE"}
	ErSpDoesNotExist        = Condition{UnknownName, 1305, "42000", "ER_SP_DOES_NOT_EXIST"}
	ErWindowNoSuchWindow    = Condition{UnknownName, 3579, "HY000", "ER_WINDOW_NO_SUCH_WINDOW"}
)

// Semantic. MySQL has no number for "not a valid query" as such; its
// generic syntax-class error (42000) is the default.
var (
	ErSyntaxError                    = Condition{Semantic, 1149, "42000", "ER_SYNTAX_ERROR"}
	ErNonUniqError                   = Condition{Semantic, 1052, "23000", "ER_NON_UNIQ_ERROR"}
	ErNonUniqTable                   = Condition{Semantic, 1066, "42000", "ER_NONUNIQ_TABLE"}
	ErWrongFieldWithGroup            = Condition{Semantic, 1055, "42000", "ER_WRONG_FIELD_WITH_GROUP"}
	ErMixOfGroupFuncAndFields        = Condition{Semantic, 1140, "42000", "ER_MIX_OF_GROUP_FUNC_AND_FIELDS"}
	ErInvalidGroupFuncUse            = Condition{Semantic, 1111, "HY000", "ER_INVALID_GROUP_FUNC_USE"}
	ErWrongNumberOfColumnsInSelect   = Condition{Semantic, 1222, "21000", "ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT"}
	ErOperandColumns                 = Condition{Semantic, 1241, "21000", "ER_OPERAND_COLUMNS"}
	ErViewWrongList                  = Condition{Semantic, 1353, "HY000", "ER_VIEW_WRONG_LIST"}
	ErOptionPreventsStatement        = Condition{Semantic, 1290, "HY000", "ER_OPTION_PREVENTS_STATEMENT"}
	ErTableExistsError               = Condition{Semantic, 1050, "42S01", "ER_TABLE_EXISTS_ERROR"}
	ErWrongValueCountOnRow           = Condition{Semantic, 1136, "21S01", "ER_WRONG_VALUE_COUNT_ON_ROW"}
	ErFileExistsError                = Condition{Semantic, 1086, "HY000", "ER_FILE_EXISTS_ERROR"}
	ErWindowCircularityInWindowGraph = Condition{Semantic, 3580, "HY000", "ER_WINDOW_CIRCULARITY_IN_WINDOW_GRAPH"}
	ErWindowNoChildPartitioning      = Condition{Semantic, 3581, "HY000", "ER_WINDOW_NO_CHILD_PARTITIONING"}
	ErWindowNoInheritFrame           = Condition{Semantic, 3582, "HY000", "ER_WINDOW_NO_INHERIT_FRAME"}
	ErWindowNoRedefineOrderBy        = Condition{Semantic, 3583, "HY000", "ER_WINDOW_NO_REDEFINE_ORDER_BY"}
	ErWindowFrameStartIllegal        = Condition{Semantic, 3584, "HY000", "ER_WINDOW_FRAME_START_ILLEGAL"}
	ErWindowFrameEndIllegal          = Condition{Semantic, 3585, "HY000", "ER_WINDOW_FRAME_END_ILLEGAL"}
	ErWindowFrameIllegal             = Condition{Semantic, 3586, "HY000", "ER_WINDOW_FRAME_ILLEGAL"}
	ErWindowRangeFrameOrderType      = Condition{Semantic, 3587, "HY000", "ER_WINDOW_RANGE_FRAME_ORDER_TYPE"}
	ErWindowRangeFrameTemporalType   = Condition{Semantic, 3588, "HY000", "ER_WINDOW_RANGE_FRAME_TEMPORAL_TYPE"}
	ErWindowRangeFrameNumericType    = Condition{Semantic, 3589, "HY000", "ER_WINDOW_RANGE_FRAME_NUMERIC_TYPE"}
	ErWindowRangeBoundNotConstant    = Condition{Semantic, 3590, "HY000", "ER_WINDOW_RANGE_BOUND_NOT_CONSTANT"}
	ErWindowDuplicateName            = Condition{Semantic, 3591, "HY000", "ER_WINDOW_DUPLICATE_NAME"}
	ErWindowInvalidWindowFuncUse     = Condition{Semantic, 3593, "HY000", "ER_WINDOW_INVALID_WINDOW_FUNC_USE"}
	ErWindowRowsIntervalUse          = Condition{Semantic, 3596, "HY000", "ER_WINDOW_ROWS_INTERVAL_USE"}
	ErFieldInGroupingNotGroupBy      = Condition{Semantic, 3602, "HY000", "ER_FIELD_IN_GROUPING_NOT_GROUP_BY"}
	ErFieldInOrderNotSelect          = Condition{Semantic, 3065, "HY000", "ER_FIELD_IN_ORDER_NOT_SELECT"}
	// ErWrongValueForVar: a value a setting does not accept.
	ErWrongValueForVar = Condition{Semantic, 1231, "42000", "ER_WRONG_VALUE_FOR_VAR"}
)

// Type: arguments of the wrong number, type or value, the literals of a
// statement included (DATE '2020-13-01' is MySQL's ER_WRONG_VALUE).
var (
	ErWrongArguments             = Condition{Type, 1210, "HY000", "ER_WRONG_ARGUMENTS"}
	ErWrongParamcountToNativeFct = Condition{Type, 1582, "42000", "ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT"}
	ErTooBigPrecision            = Condition{Type, 1426, "42000", "ER_TOO_BIG_PRECISION"}
	ErMBiggerThanD               = Condition{Type, 1427, "42000", "ER_M_BIGGER_THAN_D"}
	ErWrongValue                 = Condition{Type, 1525, "HY000", "ER_WRONG_VALUE"}
)

// Unsupported.
var ErNotSupportedYet = Condition{Unsupported, 1235, "42000", "ER_NOT_SUPPORTED_YET"}

// Execution. The default is MySQL's general error; bad values have their
// own numbers.
var (
	erExecution           = Condition{Execution, 1105, "HY000", "ER_UNKNOWN_ERROR"}
	ErDataOutOfRange      = Condition{Execution, 1690, "22003", "ER_DATA_OUT_OF_RANGE"}
	ErTruncatedWrongValue = Condition{Execution, 1292, "22007", "ER_TRUNCATED_WRONG_VALUE"}
	ErSubqueryNo1Row      = Condition{Execution, 1242, "21000", "ER_SUBQUERY_NO_1_ROW"}
)

// IO.
var (
	ErErrorOnRead    = Condition{IO, 1024, "HY000", "ER_ERROR_ON_READ"}
	ErFileNotFound   = Condition{IO, 1017, "HY000", "ER_FILE_NOT_FOUND"}
	ErNotFormFile    = Condition{IO, 1033, "HY000", "ER_NOT_FORM_FILE"}
	ErCantCreateFile = Condition{IO, 1004, "HY000", "ER_CANT_CREATE_FILE"}
)

// Conflict: MySQL's "table definition has changed, please retry
// transaction" is the same situation and the same advice.
var ErTableDefChanged = Condition{Conflict, 1412, "HY000", "ER_TABLE_DEF_CHANGED"}

// Resources.
var (
	ErOutOfResources                 = Condition{Resources, 1041, "HY000", "ER_OUT_OF_RESOURCES"}
	ErCapacityExceeded               = Condition{Resources, 3170, "HY000", "ER_CAPACITY_EXCEEDED"}
	ErTooHighLevelOfNestingForSelect = Condition{Resources, 1473, "HY000", "ER_TOO_HIGH_LEVEL_OF_NESTING_FOR_SELECT"}
	ErTooManyTables                  = Condition{Resources, 1116, "HY000", "ER_TOO_MANY_TABLES"}
	ErNetPacketTooLarge              = Condition{Resources, 1153, "08S01", "ER_NET_PACKET_TOO_LARGE"}
)

// Cancelled: a cancelled context is an interrupted query, a deadline
// MySQL's max_execution_time.
var (
	ErQueryInterrupted = Condition{Cancelled, 1317, "70100", "ER_QUERY_INTERRUPTED"}
	ErQueryTimeout     = Condition{Cancelled, 3024, "HY000", "ER_QUERY_TIMEOUT"}
)

// Internal.
var ErUnknownError = Condition{Internal, 1105, "HY000", "ER_UNKNOWN_ERROR"}

// Conditions lists every condition above, for documentation and tests.
func Conditions() []Condition {
	return []Condition{
		ErParseError, ErEmptyQuery,
		ErBadFieldError, ErNoSuchTable, ErBadTableError, ErBadDBError, ErUnknownSystemVariable, ErSpDoesNotExist, ErWindowNoSuchWindow,
		ErSyntaxError, ErNonUniqError, ErNonUniqTable, ErWrongFieldWithGroup, ErMixOfGroupFuncAndFields, ErInvalidGroupFuncUse,
		ErWrongNumberOfColumnsInSelect, ErOperandColumns, ErViewWrongList, ErOptionPreventsStatement,
		ErWindowCircularityInWindowGraph, ErWindowNoChildPartitioning, ErWindowNoInheritFrame,
		ErWindowNoRedefineOrderBy, ErWindowFrameStartIllegal, ErWindowFrameEndIllegal, ErWindowFrameIllegal,
		ErWindowRangeFrameOrderType, ErWindowRangeFrameTemporalType, ErWindowRangeFrameNumericType,
		ErWindowRangeBoundNotConstant, ErWindowDuplicateName, ErWindowInvalidWindowFuncUse, ErWindowRowsIntervalUse,
		ErFieldInGroupingNotGroupBy, ErFieldInOrderNotSelect, ErWrongValueForVar,
		ErWrongArguments, ErWrongParamcountToNativeFct, ErTooBigPrecision, ErMBiggerThanD, ErWrongValue,
		ErNotSupportedYet,
		erExecution, ErDataOutOfRange, ErTruncatedWrongValue, ErSubqueryNo1Row,
		ErErrorOnRead, ErFileNotFound, ErNotFormFile,
		ErTableDefChanged,
		ErOutOfResources, ErCapacityExceeded, ErTooHighLevelOfNestingForSelect, ErTooManyTables, ErNetPacketTooLarge,
		ErQueryInterrupted, ErQueryTimeout,
		ErUnknownError,
	}
}
