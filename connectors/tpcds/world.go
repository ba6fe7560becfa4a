package tpcds

import (
	"math"
	"strings"
)

// world holds the sizes of every table at one scale and the per-day ticket
// layout of the sales channels.
type world struct {
	scale float64
	seed  uint64
	tabs  map[string]*tableDef

	nCustomer, nAddress, nItem, nStore, nPromo, nWebPage, nWebSite int64
	nWarehouse, nCallCenter, nCatalogPage, nReason, nShipMode      int64
	nCDemo, nHDemo, nIncomeBand                                    int64

	ch map[string]*channel
}

// Sales dates: 1998-01-02 .. 2003-01-02 as in dsdgen's output.
const (
	salesFirstSK = 2450816
	salesLastSK  = 2452642
	salesDays    = salesLastSK - salesFirstSK + 1
	dateFirstSK  = 2415022
	dateLastSK   = 2488070
)

// channel is one sales channel: how many tickets (orders) each sale day
// gets and which ticket numbers they use. Index salesDays is the NULL-date
// bucket.
type channel struct {
	name       string
	sales      string // sales table
	returns    string // returns table
	minLines   int
	maxLines   int
	tickets    []int64 // per day index
	first      []int64 // first ticket number per day index
	returnFrac float64
	maxLag     int
}

func sub(base float64, scale float64, exp float64, min float64) int64 {
	v := base * math.Pow(scale, exp)
	if v < min {
		v = min
	}
	return int64(math.Round(v))
}

// fixedBelow1 keeps a small dimension at its scale-1 size below scale 1 and
// grows it slowly above.
func fixedBelow1(base float64, scale float64) int64 {
	if scale <= 1 {
		return int64(base)
	}
	return int64(math.Round(base * math.Pow(scale, 0.25)))
}

func newWorld(scale float64, seed uint64) *world {
	w := &world{scale: scale, seed: seed, tabs: buildTables()}
	w.nCustomer = sub(100000, scale, 0.7, 2000)
	w.nAddress = (w.nCustomer + 1) / 2
	w.nItem = sub(18000, scale, 0.5, 2000) &^ 1
	w.nStore = fixedBelow1(12, scale)
	w.nPromo = fixedBelow1(300, scale)
	w.nWebPage = fixedBelow1(60, scale)
	w.nWebSite = fixedBelow1(30, scale)
	w.nWarehouse = fixedBelow1(5, scale)
	w.nCallCenter = fixedBelow1(6, scale)
	w.nCatalogPage = fixedBelow1(11718, scale)
	w.nReason = fixedBelow1(35, scale)
	w.nShipMode = 20
	w.nCDemo = 1920800
	w.nHDemo = 7200
	w.nIncomeBand = 20
	w.ch = map[string]*channel{
		"store":   w.newChannel("store", "store_sales", "store_returns", 240000, 8, 16, 0.0998, 120),
		"catalog": w.newChannel("catalog", "catalog_sales", "catalog_returns", 160000, 4, 14, 0.0999, 150),
		"web":     w.newChannel("web", "web_sales", "web_returns", 60000, 8, 16, 0.0998, 150),
	}
	return w
}

// rows returns the row count of a table at this scale (facts: expected).
func (w *world) rows(table string) int64 {
	switch table {
	case "customer":
		return w.nCustomer
	case "customer_address":
		return w.nAddress
	case "item":
		return w.nItem
	case "store":
		return w.nStore
	case "promotion":
		return w.nPromo
	case "web_page":
		return w.nWebPage
	case "web_site":
		return w.nWebSite
	case "warehouse":
		return w.nWarehouse
	case "call_center":
		return w.nCallCenter
	case "catalog_page":
		return w.nCatalogPage
	case "reason":
		return w.nReason
	case "ship_mode":
		return w.nShipMode
	case "customer_demographics":
		return w.nCDemo
	case "household_demographics":
		return w.nHDemo
	case "income_band":
		return w.nIncomeBand
	case "date_dim":
		return dateLastSK - dateFirstSK + 1
	case "time_dim":
		return 86400
	case "inventory":
		return int64(len(inventoryWeeks())) * (w.nItem / 2) * w.nWarehouse
	}
	return 0
}

func (w *world) newChannel(name, sales, returns string, ticketsAt1 float64, minL, maxL int, retFrac float64, maxLag int) *channel {
	total := ticketsAt1 * w.scale
	nullFrac := stats().summary[sales+"."+w.tabs[sales].cols[w.tabs[sales].partKey].name].nullFrac
	// Sales with a NULL date are never returned; the others make up for them.
	c := &channel{name: name, sales: sales, returns: returns, minLines: minL, maxLines: maxL, returnFrac: retFrac / (1 - nullFrac), maxLag: maxLag}
	monthly := stats().monthly[sales]
	weights := make([]float64, salesDays)
	var sum float64
	for d := 0; d < salesDays; d++ {
		y, m, _ := civil(salesFirstSK + int64(d))
		idx := (y-baseYear)*12 + m - 1
		var wt float64 = 1
		if idx < len(monthly) {
			wt = float64(monthly[idx]) / float64(daysIn(y, m))
		}
		weights[d] = wt
		sum += wt
	}
	c.tickets = make([]int64, salesDays+1)
	c.first = make([]int64, salesDays+1)
	var acc float64
	var prev int64
	dated := total * (1 - nullFrac)
	for d := 0; d < salesDays; d++ {
		acc += weights[d] / sum * dated
		cur := int64(math.Round(acc))
		c.tickets[d] = cur - prev
		prev = cur
	}
	c.tickets[salesDays] = int64(math.Round(total * nullFrac))
	var next int64 = 1
	for d := range c.tickets {
		c.first[d] = next
		next += c.tickets[d]
	}
	return c
}

// bkey is the TPC-DS 16-character business key of a number.
func bkey(n int64) string {
	var b [16]byte
	for i := 0; i < 8; i++ {
		b[i] = 'A' + byte((n>>(32+4*i))&0xF)
		b[8+i] = 'A' + byte((n>>(4*i))&0xF)
	}
	return string(b[:])
}

var syllables = []string{"ought", "able", "pri", "ese", "anti", "cally", "ation", "eing", "n st", "bar"}

// word spells a number with the TPC-DS syllables (as dsdgen's mk_word).
func word(n int64) string {
	var sb strings.Builder
	var digits []int64
	if n == 0 {
		digits = []int64{0}
	}
	for n > 0 {
		digits = append(digits, n%10)
		n /= 10
	}
	for i := len(digits) - 1; i >= 0; i-- {
		sb.WriteString(syllables[digits[i]])
	}
	return sb.String()
}
