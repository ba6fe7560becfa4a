package sql

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
)

// Assignment is one `key = value` of a SET statement: the value as the
// text a configuration key reads (Value), or Default for SET key =
// DEFAULT. The sql package does not know the keys; the session that runs
// the statement checks and applies them.
type Assignment struct {
	Key     string
	Value   string
	Default bool
}

// bindSet binds SET key = value[, key = value ...]. A value is a
// constant: a literal (numbers, strings such as '1gb'), a bare word (ON,
// OFF, auto: MySQL reads an identifier there as its name), DEFAULT, a ?
// parameter, or a constant expression (4 * 1024).
func (b *Binder) bindSet(s *ast.SetStmt) (*Statement, error) {
	st := &Statement{}
	for _, v := range s.Variables {
		switch {
		case v.Name == ast.SetNames || v.Name == ast.SetCharset:
			return nil, errs.New(errs.Unsupported, "SET NAMES / SET CHARACTER SET: fsql reads and returns utf8mb4 text only")
		case !v.IsSystem:
			return nil, errs.New(errs.Unsupported, "user variable @%s: fsql has no user variables; SET key = value changes a setting (SHOW VARIABLES lists them), and ? parameters pass values to a statement", v.Name)
		case strings.HasPrefix(v.Name, "tx_"): // SET TRANSACTION ...
			return nil, errs.New(errs.Unsupported, "SET TRANSACTION: fsql reads files and runs no transactions")
		}
		a := Assignment{Key: v.Name}
		switch x := v.Value.(type) {
		case *ast.DefaultExpr:
			if x.Name != nil {
				return nil, errs.New(errs.ErWrongValueForVar, "DEFAULT(%s) as the value of %s (write SET %s = DEFAULT)", columnText(x.Name), v.Name, quoteName(v.Name))
			}
			a.Default = true
		case *ast.ColumnNameExpr:
			if x.Name.Table.O != "" {
				return nil, errs.New(errs.ErWrongValueForVar, "SET %s = %s: a value is a constant, not a column", quoteName(v.Name), columnText(x.Name))
			}
			a.Value = x.Name.Name.O
		default:
			e, err := b.bindScalar(v.Value, newScope(nil, nil))
			if err != nil {
				return nil, errs.Wrap(errs.Semantic, "SET %s: %w", quoteName(v.Name), err)
			}
			text, err := settingText(e)
			if err != nil {
				return nil, errs.New(errs.ErWrongValueForVar, "SET %s = %s: %w", quoteName(v.Name), restore(v.Value), err)
			}
			a.Value = text
		}
		st.Set = append(st.Set, a)
	}
	return st, nil
}

// settingText is the text of a folded constant, as a setting reads it:
// numbers in decimal, strings as they are, booleans true/false.
func settingText(e expr.Expr) (string, error) {
	l, ok := e.(*expr.Literal)
	if !ok {
		return "", fmt.Errorf("the value must be a constant")
	}
	switch v := l.Value.(type) {
	case nil:
		return "", fmt.Errorf("the value is NULL; give a value, or DEFAULT")
	case bool:
		return strconv.FormatBool(v), nil
	case int8, int16, int32, int64:
		return fmt.Sprint(v), nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case decimal128.Num:
		return v.ToString(l.Type.(*arrow.Decimal128Type).Scale), nil
	case string:
		return v, nil
	case arrow.Date32:
		return v.FormattedString(), nil
	}
	return "", fmt.Errorf("a %s value", l.Type)
}

// quoteName writes a key as SET needs it: in backquotes when it is not
// made of letters, digits, '_', '$' and dots.
func quoteName(k string) string {
	for _, r := range k {
		if !(r == '_' || r == '$' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "`" + strings.ReplaceAll(k, "`", "``") + "`"
		}
	}
	return k
}
