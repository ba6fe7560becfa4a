package tpcds

import (
	"strconv"
	"strings"
	"time"
)

var vocab = strings.Fields(`able about above across after again against almost along already also
although always among another anyone anything area areas around available away back based because
become becoming before begin being believe better between beyond black blue body book both boys brief
bright british brown building business called capital careful cases central certain changes cheap
children clear clothes close colours common complete concerned conditions could country courses
current daily dark days decisions deep detailed developments different difficult direct early
economic either electric emotional english entire equal events every everything excellent extra
facilities fair families famous final financial fine first following foreign forms forward free
french friends full further general girls given glad good great green growing hands happy hard heavy
high holidays hours human ideas important individual industrial international items jobs just kinds
large later leading legal light likely little local long lovely main major many markets members
military modern months more most national natural necessary needs new nice normal now numbers obvious
old only open other parts particular past people personal physical plans political poor popular
possible powerful present previous private problems proper public quick quiet ready real recent
red regional relevant remaining right round rural safe same scientific second serious services
several short significant similar simple single small social soft special specific standard still
strong subsequent successful such sure systems technical terms things thus together total traditional
true twice typical various very visible warm western white whole wide women working years young`)

func sentence(r *rng, minW, maxW int) string {
	n := r.rangeInt(minW, maxW)
	var sb strings.Builder
	for k := 0; k < n; k++ {
		if k > 0 {
			sb.WriteByte(' ')
		}
		w := vocab[r.intn(len(vocab))]
		if k == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		sb.WriteString(w)
	}
	sb.WriteByte('.')
	return sb.String()
}

// fkSize returns the row count of the dimension a key column refers to, or 0.
func (w *world) fkSize(col string) int64 {
	switch {
	case strings.HasSuffix(col, "customer_sk"):
		return w.nCustomer
	case strings.HasSuffix(col, "item_sk"):
		return w.nItem
	case strings.HasSuffix(col, "addr_sk"):
		return w.nAddress
	case strings.HasSuffix(col, "cdemo_sk"):
		return w.nCDemo
	case strings.HasSuffix(col, "hdemo_sk"):
		return w.nHDemo
	}
	return 0
}

func parseDateSK(s string) int64 {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return salesFirstSK
	}
	return julian(t.Year(), int(t.Month()), t.Day())
}

func parseCents(s string) int64 {
	f, _ := strconv.ParseFloat(s, 64)
	if f < 0 {
		return int64(f*100 - 0.5)
	}
	return int64(f*100 + 0.5)
}

// expand returns the values of a list repeated by their counts and shuffled,
// so that row i taking element i%len reproduces the frequencies exactly.
func expand(v *valueList, r *rng) ([]string, []bool) {
	vals := make([]string, 0, v.total)
	nulls := make([]bool, 0, v.total)
	var prev uint64
	for i := range v.vals {
		for k := prev; k < v.cum[i]; k++ {
			vals = append(vals, v.vals[i])
			nulls = append(nulls, v.null[i])
		}
		prev = v.cum[i]
	}
	for i := len(vals) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		vals[i], vals[j] = vals[j], vals[i]
		nulls[i], nulls[j] = nulls[j], nulls[i]
	}
	return vals, nulls
}

// genericDim writes a small dimension: keys are row numbers, columns with a
// measured value list reproduce its frequencies exactly, the others are
// drawn from the measured range. over may emit a column itself.
func (w *world) genericDim(s *sink, n int64, over func(col string, i int64) bool) error {
	t := s.t
	st := stats()
	type colGen struct {
		vals  []string
		nulls []bool
	}
	gens := make([]colGen, len(t.cols))
	for c, cd := range t.cols {
		if v := st.vl(t.name, cd.name); v != nil && v.total <= 100000 {
			gens[c].vals, gens[c].nulls = expand(v, newRNG(w.seed, hashString(t.name+"."+cd.name)))
		}
	}
	for i := int64(0); i < n; i++ {
		for c, cd := range t.cols {
			if over != nil && over(cd.name, i) {
				continue
			}
			g := gens[c]
			switch {
			case c == 0:
				s.i(i + 1)
			case cd.kind == kStr && strings.HasSuffix(cd.name, "_id"):
				s.str(bkey(i + 1))
			case g.vals != nil:
				k := int(i % int64(len(g.vals)))
				w.emitText(s, cd, g.vals[k], g.nulls[k])
			default:
				w.emitRange(s, cd)
			}
		}
		if err := s.end(); err != nil {
			return err
		}
	}
	return nil
}

// emitText writes a value given as text (from value_counts) in the column's type.
func (w *world) emitText(s *sink, cd colDef, v string, null bool) {
	if null {
		s.null()
		return
	}
	switch cd.kind {
	case kStr:
		s.strN(v, false)
	case kInt:
		n, _ := strconv.ParseInt(v, 10, 64)
		if m := w.fkSize(cd.name); m > 0 && n > m {
			n = (n-1)%m + 1
		}
		s.iN(n, false)
	case kDate:
		s.dateN(parseDateSK(v), false)
	default:
		s.dN(parseCents(v), false)
	}
}

// emitRange writes a value drawn uniformly from the column's measured range.
func (w *world) emitRange(s *sink, cd colDef) {
	st := stats().summary[s.t.name+"."+cd.name]
	r := s.r
	if st.min == "NULL" {
		s.null()
		return
	}
	switch cd.kind {
	case kInt:
		lo, _ := strconv.ParseInt(st.min, 10, 64)
		hi, _ := strconv.ParseInt(st.max, 10, 64)
		if m := w.fkSize(cd.name); m > 0 {
			lo, hi = 1, m
		}
		s.i(lo + int64(r.intn(int(hi-lo+1))))
	case kDate:
		lo, hi := parseDateSK(st.min), parseDateSK(st.max)
		s.date(lo + int64(r.intn(int(hi-lo+1))))
	case kDec32, kDec64:
		lo, hi := parseCents(st.min), parseCents(st.max)
		s.d(lo + int64(r.intn(int(hi-lo+1))))
	case kStr:
		s.str(sentence(r, 3, 10))
	}
}
