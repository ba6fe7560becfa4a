package planwire

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The wire format must cover every plan node and expression type: these
// helpers find them in the source of the packages that define them, so a
// type added there without an encoding fails the tests here.

// parsePackage parses the non-test Go files of the package in dir.
func parsePackage(t *testing.T, dir string) (*token.FileSet, []*ast.File, map[*ast.File][]byte) {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	srcs := map[*ast.File][]byte{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		srcs[f] = src
	}
	return fset, files, srcs
}

// methodReceivers returns the exported types of the package in dir
// (test files excluded) that have a method named method whose parameter
// list, as written, is params.
func methodReceivers(t *testing.T, dir, method, params string) []string {
	t.Helper()
	fset, files, srcs := parsePackage(t, dir)
	seen := map[string]bool{}
	for _, f := range files {
		src := srcs[f]
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != method || len(fn.Recv.List) != 1 {
				continue
			}
			var ps []string
			for _, p := range fn.Type.Params.List {
				typ := string(src[fset.Position(p.Type.Pos()).Offset:fset.Position(p.Type.End()).Offset])
				n := max(len(p.Names), 1)
				for i := 0; i < n; i++ {
					ps = append(ps, typ)
				}
			}
			if strings.Join(ps, ", ") != params {
				continue
			}
			recv := fn.Recv.List[0].Type
			if s, ok := recv.(*ast.StarExpr); ok {
				recv = s.X
			}
			if id, ok := recv.(*ast.Ident); ok && id.IsExported() {
				seen[id.Name] = true
			}
		}
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// nodeTypes are the exported plan node types ("exec.Scan",
// "shuffle.Exchange", ...): whatever implements exec.Node's Open.
func nodeTypes(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, n := range methodReceivers(t, filepath.Join("..", "exec"), "Open", "*TaskContext, []Stream") {
		out = append(out, "exec."+n)
	}
	for _, n := range methodReceivers(t, filepath.Join("..", "shuffle"), "Open", "*exec.TaskContext, []exec.Stream") {
		out = append(out, "shuffle."+n)
	}
	if len(out) < 17 {
		t.Fatalf("found only %v: the source scan is broken", out)
	}
	return out
}

// exprTypes are the exported expression types of exec/expr (whatever
// implements expr.Expr's Eval).
func exprTypes(t *testing.T) []string {
	t.Helper()
	out := methodReceivers(t, filepath.Join("..", "exec", "expr"), "Eval", "*Context, arrow.RecordBatch")
	if len(out) < 3 {
		t.Fatalf("found only %v: the source scan is broken", out)
	}
	return out
}

// enumConstants are the constants declared with type typ in the package
// in dir.
func enumConstants(t *testing.T, dir, typ string) []string {
	t.Helper()
	_, files, _ := parsePackage(t, dir)
	var out []string
	{
		for _, f := range files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				current := "" // the type an iota block carries on
				for _, s := range g.Specs {
					v := s.(*ast.ValueSpec)
					if v.Type != nil {
						current = ""
						if id, ok := v.Type.(*ast.Ident); ok {
							current = id.Name
						}
					} else if len(v.Values) > 0 {
						current = ""
					}
					if current != typ {
						continue
					}
					for _, n := range v.Names {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// NodeTypes is nodeTypes for the external tests.
var NodeTypes = nodeTypes

// EncodedTypes are the structs a plan is made of (the keys of encoded),
// for the external tests.
func EncodedTypes() []reflect.Type {
	out := make([]reflect.Type, 0, len(encoded))
	for t := range encoded {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
