package fsql_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/parquet-go/parquet-go"

	"github.com/fsql-dev/fsql"
)

// City is one row of the example's Parquet table.
type City struct {
	Name       string `parquet:"name"`
	Country    string `parquet:"country"`
	Population int64  `parquet:"population"`
}

// Example writes a small Parquet table, opens an engine over its folder and
// reads a query's result batch by batch.
func Example() {
	// A data directory holds one folder per table; the folder's Parquet
	// files are the table's rows.
	dir, err := os.MkdirTemp("", "fsql-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Mkdir(filepath.Join(dir, "cities"), 0o755); err != nil {
		log.Fatal(err)
	}
	err = parquet.WriteFile(filepath.Join(dir, "cities", "part-0.parquet"), []City{
		{"Lyon", "FR", 522_000},
		{"Paris", "FR", 2_103_000},
		{"Porto", "PT", 232_000},
		{"Lisbon", "PT", 545_000},
		{"Nice", "FR", 348_000},
	})
	if err != nil {
		log.Fatal(err)
	}

	eng, err := fsql.Open(dir, fsql.DefaultConfig())
	if err != nil {
		log.Fatal(err)
	}
	// Cancelling the context (here: its deadline passing) stops the query.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := eng.Query(ctx, `
		select country, count(*) as cities, sum(population) as people
		from cities
		group by country
		order by people desc`)
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		// Each batch is an Arrow record batch, valid until the next call
		// to Next.
		b := rows.RecordBatch()
		country := b.Column(0).(*array.String)
		n := b.Column(1).(*array.Int64)
		people := b.Column(2)
		for i := 0; i < int(b.NumRows()); i++ {
			fmt.Printf("%s %d %s\n", country.Value(i), n.Value(i), people.ValueStr(i))
		}
	}
	if err := rows.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// FR 3 2973000
	// PT 2 777000
}
