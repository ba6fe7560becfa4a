// Package errs is fsql's one error model: every error the engine returns
// is an *Error of one Kind (syntax, unknown name, semantic, type,
// unsupported, execution, I/O, conflict, resources, cancelled, internal),
// with the MySQL error number and SQLSTATE a MySQL-protocol front end
// sends, a position in the statement where one is known, and its cause
// kept for errors.Is and errors.As.
//
// The package sits below every other package of fsql and imports none of
// them, so the parser, the expression kernels, the Parquet reader and the
// scheduler all classify their errors the same way and no layer has to
// translate another's sentinels.
//
// Making an error:
//
//	errs.New(errs.UnknownName, "unknown column '%s'", name)          // a kind, its default number
//	errs.New(errs.ErNoSuchTable, "table '%s' not found", name)       // a specific MySQL condition
//	errs.New(errs.Syntax, "syntax error: %s", msg).At(pos)           // with a position
//	errs.Wrap(errs.Execution, "scan of table %s: %w", table, err)   // context around a cause
//
// A %w operand is the cause: errors.Is and errors.As see through to it (a
// missing data folder is still fs.ErrNotExist). New always takes the class
// it is given; Wrap keeps the kind, number, SQLSTATE and position of a
// cause that has a kind and takes its class only for one that has none,
// so a scan wrapping a file's I/O error stays an I/O error.
//
// Telling errors apart:
//
//	errors.Is(err, errs.Unsupported)    // its kind
//	errors.Is(err, errs.ErNoSuchTable)  // its MySQL number
//	errs.KindOf(err)                    // the kind; context errors are Cancelled
//	errs.CodeOf(err)                    // MySQL number and SQLSTATE, for a wire protocol
//	errs.Retryable(err)                 // whether running the query again may succeed
//	errs.IsTransient(err)               // whether another attempt of the failed task may
//
// Packages may keep sentinels of their own for their specific cases
// (hive.ErrNotParquet, expr.ErrOverflow): those are *Error values made
// with New, so wrapping them with fmt.Errorf("%w: ...") keeps their kind.
package errs
