package expr

import "github.com/apache/arrow-go/v18/arrow"

// TypeName spells a column type the way a MySQL user knows it (BIGINT,
// DECIMAL(7,2), VARCHAR, DATE), as messages and EXPLAIN do; the command
// line's \d shows it.
func TypeName(t arrow.DataType) string { return typeSQL(t) }
