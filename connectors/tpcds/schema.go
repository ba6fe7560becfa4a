package tpcds

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"
)

type colKind int

const (
	kInt   colKind = iota // INTEGER -> INT32
	kDec32                // DECIMAL(p<=9, s) -> INT32 decimal
	kDec64                // DECIMAL(p>9, s) -> INT64 decimal
	kStr                  // VARCHAR/CHAR -> STRING
	kDate                 // DATE -> DATE (days since epoch)
)

type colDef struct {
	name      string
	kind      colKind
	prec, scl int
	required  bool
	nullFrac  float64
}

type tableDef struct {
	name    string
	cols    []colDef
	partKey int // index of the Hive partition column, -1 for dimensions
	index   map[string]int
}

// partitionKeys maps each fact table to its date key.
var partitionKeys = map[string]string{
	"store_sales":     "ss_sold_date_sk",
	"catalog_sales":   "cs_sold_date_sk",
	"web_sales":       "ws_sold_date_sk",
	"store_returns":   "sr_returned_date_sk",
	"catalog_returns": "cr_returned_date_sk",
	"web_returns":     "wr_returned_date_sk",
	"inventory":       "inv_date_sk",
}

// primaryKeys lists the key columns that are never NULL.
var primaryKeys = map[string][]string{
	"store_sales":     {"ss_item_sk", "ss_ticket_number"},
	"catalog_sales":   {"cs_item_sk", "cs_order_number"},
	"web_sales":       {"ws_item_sk", "ws_order_number"},
	"store_returns":   {"sr_item_sk", "sr_ticket_number"},
	"catalog_returns": {"cr_item_sk", "cr_order_number"},
	"web_returns":     {"wr_item_sk", "wr_order_number"},
	"inventory":       {"inv_date_sk", "inv_item_sk", "inv_warehouse_sk"},
}

func buildTables() map[string]*tableDef {
	s := stats()
	out := map[string]*tableDef{}
	for _, name := range s.order {
		t := &tableDef{name: name, partKey: -1, index: map[string]int{}}
		pks := primaryKeys[name]
		for i, c := range s.cols[name] {
			st := s.summary[name+"."+c]
			cd := colDef{name: c, nullFrac: st.nullFrac}
			switch {
			case st.typ == "INTEGER":
				cd.kind = kInt
			case st.typ == "VARCHAR" || strings.HasPrefix(st.typ, "CHAR"):
				cd.kind = kStr
			case st.typ == "DATE":
				cd.kind = kDate
			case strings.HasPrefix(st.typ, "DECIMAL("):
				var p, sc int
				if _, err := fmt.Sscanf(st.typ, "DECIMAL(%d,%d)", &p, &sc); err != nil {
					panic("tpcds: bad type " + st.typ)
				}
				cd.prec, cd.scl = p, sc
				cd.kind = kDec32
				if p > 9 {
					cd.kind = kDec64
				}
			default:
				panic("tpcds: unknown type " + st.typ)
			}
			if pks == nil {
				cd.required = i == 0
			} else {
				for _, k := range pks {
					if k == c {
						cd.required = true
					}
				}
			}
			if cd.required {
				cd.nullFrac = 0
			}
			t.index[c] = i
			t.cols = append(t.cols, cd)
		}
		if pk, ok := partitionKeys[name]; ok {
			t.partKey = t.index[pk]
		}
		out[name] = t
	}
	return out
}

// parquetSchema builds the file schema, leaving out column skip (the Hive
// partition column) when skip >= 0. A struct type is built at run time so
// the columns keep the spec's order (parquet.Group sorts by name).
func (t *tableDef) parquetSchema(skip int) *parquet.Schema {
	key := t.name + "/" + strconv.Itoa(skip)
	if v, ok := schemaCache.Load(key); ok {
		return v.(*parquet.Schema)
	}
	sch := t.buildSchema(skip)
	schemaCache.Store(key, sch)
	return sch
}

var schemaCache sync.Map

func (t *tableDef) buildSchema(skip int) *parquet.Schema {
	var fields []reflect.StructField
	for i, c := range t.cols {
		if i == skip {
			continue
		}
		var typ reflect.Type
		tag := c.name
		switch c.kind {
		case kInt:
			typ = reflect.TypeFor[int32]()
			if c.required {
				// Surrogate keys are dense and sorted: delta encoding
				// stores them in a few bits each instead of four bytes.
				tag += ",delta"
			}
		case kDate:
			typ = reflect.TypeFor[int32]()
			tag += ",date"
		case kDec32:
			typ = reflect.TypeFor[int32]()
			tag += ",decimal(" + strconv.Itoa(c.scl) + ":" + strconv.Itoa(c.prec) + ")"
		case kDec64:
			typ = reflect.TypeFor[int64]()
			tag += ",decimal(" + strconv.Itoa(c.scl) + ":" + strconv.Itoa(c.prec) + ")"
		case kStr:
			typ = reflect.TypeFor[string]()
			tag += ",string"
		}
		if !c.required {
			if c.kind == kStr {
				tag += ",optional"
			} else {
				typ = reflect.PointerTo(typ)
			}
		}
		fields = append(fields, reflect.StructField{
			Name: "F" + strconv.Itoa(i),
			Type: typ,
			Tag:  reflect.StructTag(`parquet:"` + tag + `"`),
		})
	}
	st := reflect.StructOf(fields)
	return parquet.NewSchema(t.name, parquet.SchemaOf(reflect.New(st).Interface()))
}
