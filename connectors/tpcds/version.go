package tpcds

import "strconv"

// GeneratorVersion numbers the data the generator writes: it goes up
// whenever the same options would write different rows, so a data set
// kept from an earlier run can be told from the current generator's.
//
//   - 2: cs_ship_date_sk and ws_ship_date_sk are NULL for the lines
//     without a sold date (version 1 wrote the key 0, which no date_dim
//     row has).
const GeneratorVersion = 2

// CacheFolder is the folder name under which a generated data set is
// kept between runs (tests and benchmarks keep theirs in the user cache
// folder): name, such as "tpcds-sf0.2-seed1-flat", with the generator
// version appended. A set an older generator wrote then sits under
// another name and is never read as the current one; the current one is
// generated beside it.
func CacheFolder(name string) string {
	return name + "-g" + strconv.Itoa(GeneratorVersion)
}
