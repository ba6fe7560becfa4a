package hive

import (
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// typePartitions decides the type of each partition column from all of its
// folder values, then converts them. The rule, per column, ignoring NULLs
// (__HIVE_DEFAULT_PARTITION__):
//   - every value an integer: Int32 when all fit in 32 bits, else Int64
//     (TPC-DS date keys are INTEGER, which is Int32 in fsql);
//   - every value a YYYY-MM-DD date: Date32;
//   - otherwise (or all NULL): String.
func typePartitions(keys []string, raws []rawPartition) ([]arrow.DataType, [][]any, error) {
	types := make([]arrow.DataType, len(keys))
	values := make([][]any, len(raws))
	for i := range raws {
		values[i] = make([]any, len(keys))
	}
	for k := range keys {
		allInt, allInt32, allDate, some := true, true, true, false
		for _, r := range raws {
			v := r.values[k]
			if v == DefaultPartitionName {
				continue
			}
			some = true
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				if n < math.MinInt32 || n > math.MaxInt32 {
					allInt32 = false
				}
			} else {
				allInt = false
			}
			if _, ok := parseDate(v); !ok {
				allDate = false
			}
		}
		switch {
		case !some:
			types[k] = arrow.BinaryTypes.String
		case allInt && allInt32:
			types[k] = arrow.PrimitiveTypes.Int32
		case allInt:
			types[k] = arrow.PrimitiveTypes.Int64
		case allDate:
			types[k] = arrow.FixedWidthTypes.Date32
		default:
			types[k] = arrow.BinaryTypes.String
		}
		for i, r := range raws {
			v := r.values[k]
			if v == DefaultPartitionName {
				continue
			}
			switch types[k].ID() {
			case arrow.INT32:
				n, _ := strconv.ParseInt(v, 10, 32)
				values[i][k] = int32(n)
			case arrow.INT64:
				n, _ := strconv.ParseInt(v, 10, 64)
				values[i][k] = n
			case arrow.DATE32:
				d, _ := parseDate(v)
				values[i][k] = d
			default:
				values[i][k] = v
			}
		}
	}
	return types, values, nil
}

func parseDate(s string) (arrow.Date32, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return 0, false
	}
	return arrow.Date32FromTime(t), true
}
