package expr

var stringBinders = map[string]binder{}
var mathBinders = map[string]binder{}

func bindIn(fn string, args []Expr) (Expr, error)   { return nil, argErr(fn, args, "not yet") }
func bindLike(fn string, args []Expr) (Expr, error) { return nil, argErr(fn, args, "not yet") }
