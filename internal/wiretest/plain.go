package wiretest

import (
	"reflect"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
)

// A plan is data: it holds no Go closure and no live runtime object (a
// coordinator, an allocator, a lock, a channel, a file), so it can run
// twice and leave the process. CheckType proves it of a type, over every
// type its fields can hold; CheckPlan of a plan's values, where an
// interface field (an expression, a literal's value) holds a concrete
// type the declared one does not name.
//
// What a field may hold: numbers, strings, booleans, and pointers,
// slices, arrays, maps and structs of them; the interfaces exec.Node and
// expr.Expr (their values are checked in turn), arrow.DataType (a type of
// the format's type system, which the wire carries by ID) and any (a
// literal's or partition's Go value, checked in turn); error only inside
// a catalog table (a column's read error, a message).

var (
	nodeType     = reflect.TypeFor[exec.Node]()
	exprType     = reflect.TypeFor[expr.Expr]()
	dataTypeType = reflect.TypeFor[arrow.DataType]()
	errorType    = reflect.TypeFor[error]()
	callType     = reflect.TypeFor[expr.Call]()
)

// derived are fields that cache what the rest of their struct determines,
// rebuilt rather than carried: a call's kernel is resolved again from its
// function name and argument types by the binders when a plan is decoded
// (expr.Rebind), as it was when the plan was built. The rows of a chunk
// of an in-memory table are named by the chunk's file path (its ID): the
// decoder resolves the table by name and takes the chunk of that path,
// as it takes a Parquet file's footer.
var derived = map[reflect.Type]string{callType: "impl", reflect.TypeFor[hive.File](): "mem"}

// live are packages whose types are runtime objects, never plan data.
var live = []string{
	"sync", "sync/atomic", "context", "os", "net", "io", "runtime",
	"github.com/apache/arrow-go/v18/arrow/memory",
	"github.com/apache/arrow-go/v18/arrow/array",
	"github.com/fsql-dev/fsql/runtime",
}

// liveTypes are types of packages that hold plans too, which are runtime
// objects.
var liveTypes = map[string]bool{
	"github.com/fsql-dev/fsql/exec.TaskContext":        true,
	"github.com/fsql-dev/fsql/pruning.Coordinator":     true,
	"github.com/fsql-dev/fsql/shuffle.Store":           true,
	"github.com/fsql-dev/fsql/connectors/hive.Catalog": true,
}

// CheckType reports the first field, reachable from t, whose type a plan
// may not hold, with the path to it.
func CheckType(t reflect.Type) error {
	return (&checker{seen: map[reflect.Type]bool{}}).typ(t, t.String())
}

type checker struct {
	seen map[reflect.Type]bool
	// inTable: below a catalog table, where error fields are allowed.
	inTable bool
}

func (c *checker) typ(t reflect.Type, path string) error {
	if t.Kind() != reflect.Interface { // an interface's verdict depends on where it is
		if c.seen[t] {
			return nil
		}
		c.seen[t] = true
	}
	if name := t.PkgPath() + "." + t.Name(); t.Name() != "" && liveTypes[name] {
		return errs.New(errs.Internal, "%s is a %s, a runtime object", path, t)
	}
	if p := t.PkgPath(); p != "" {
		for _, l := range live {
			if p == l {
				return errs.New(errs.Internal, "%s is a %s, of package %s, a runtime object", path, t, p)
			}
		}
	}
	switch t.Kind() {
	case reflect.Func:
		return errs.New(errs.Internal, "%s is a function (%s): a plan holds expressions, not closures", path, t)
	case reflect.Chan:
		return errs.New(errs.Internal, "%s is a channel (%s)", path, t)
	case reflect.UnsafePointer, reflect.Uintptr:
		return errs.New(errs.Internal, "%s is a raw pointer (%s)", path, t)
	case reflect.Interface:
		switch {
		case t == nodeType, t == exprType, t == dataTypeType, t.NumMethod() == 0:
			return nil // values checked by CheckPlan
		case t == errorType && c.inTable:
			return nil
		}
		return errs.New(errs.Internal, "%s is an interface %s, which may hold anything: use a plan type, or add it to the rules of wiretest.CheckType", path, t)
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return c.typ(t.Elem(), path+"[]")
	case reflect.Map:
		if err := c.typ(t.Key(), path+"{key}"); err != nil {
			return err
		}
		return c.typ(t.Elem(), path+"{}")
	case reflect.Struct:
		inTable := c.inTable
		if strings.HasPrefix(t.PkgPath(), "github.com/fsql-dev/fsql/connectors/hive") {
			c.inTable = true
		}
		defer func() { c.inTable = inTable }()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if derived[t] == f.Name {
				continue
			}
			if err := c.typ(f.Type, path+"."+f.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckPlan walks every value reachable from root, through every field
// (exported or not), and checks the concrete
// type of every interface value with CheckType. Types of arrow.DataType
// values are not walked: they are the format's own (the wire carries them
// by ID and parameters), and some cache a lock.
func CheckPlan(root exec.Node) error {
	w := &walker{c: &checker{seen: map[reflect.Type]bool{}}, seen: map[pointer]bool{}}
	return w.value(reflect.ValueOf(&root).Elem(), "plan")
}

type walker struct {
	c    *checker
	seen map[pointer]bool
}

// pointer identifies a value walked: a struct and its first field share
// an address.
type pointer struct {
	t reflect.Type
	p uintptr
}

func (w *walker) value(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		if v.Type() == dataTypeType {
			return nil
		}
		e := v.Elem()
		if err := w.c.typ(e.Type(), path+"("+e.Type().String()+")"); err != nil {
			return err
		}
		return w.value(e, path)
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		k := pointer{v.Type(), v.Pointer()}
		if w.seen[k] {
			return nil
		}
		w.seen[k] = true
		return w.value(v.Elem(), path)
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := w.value(v.Index(i), path+"[]"); err != nil {
				return err
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if err := w.value(it.Key(), path+"{key}"); err != nil {
				return err
			}
			if err := w.value(it.Value(), path+"{}"); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			if derived[t] == t.Field(i).Name {
				continue
			}
			if err := w.value(v.Field(i), path+"."+t.Field(i).Name); err != nil {
				return err
			}
		}
	}
	return nil
}
