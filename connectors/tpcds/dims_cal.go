package tpcds

import (
	"math"
	"strconv"
	"strings"
)

func yn(b bool) string {
	if b {
		return "Y"
	}
	return "N"
}

func isHoliday(y, m, d int) bool {
	switch {
	case m == 1 && d == 1, m == 7 && d == 4, m == 12 && d == 25, m == 11 && d == 11:
		return true
	case m == 11 && dow(julian(y, m, d)) == 4 && d >= 22 && d <= 28: // Thanksgiving
		return true
	case m == 9 && dow(julian(y, m, d)) == 1 && d <= 7: // Labor Day
		return true
	}
	return false
}

func (w *world) genDate(s *sink) error {
	for sk := int64(dateFirstSK); sk <= dateLastSK; sk++ {
		y, m, d := civil(sk)
		q := (m-1)/3 + 1
		wd := dow(sk)
		weekSeq := (sk-2415020)/7 + 1
		quarterSeq := int64((y-1900)*4 + q)
		s.i(sk)
		s.str(bkey(sk))
		s.date(sk)
		s.i(int64((y-1900)*12 + m - 1))
		s.i(weekSeq)
		s.i(quarterSeq)
		s.i(int64(y))
		s.i(int64(wd))
		s.i(int64(m))
		s.i(int64(d))
		s.i(int64(q))
		s.i(int64(y))
		s.i(quarterSeq)
		s.i(weekSeq)
		s.str(dayNames[wd])
		s.str(strconv.Itoa(y) + "Q" + strconv.Itoa(q))
		s.str(yn(isHoliday(y, m, d)))
		s.str(yn(wd == 0 || wd == 6))
		py, pm, pd := civil(sk - 1)
		s.str(yn(isHoliday(py, pm, pd)))
		s.i(julian(y, m, 1))
		s.i(julian(y, m, daysIn(y, m)))
		s.i(sk - 365)
		s.i(sk - 91)
		s.str("N")
		s.str("N")
		s.str(yn(y == 2003 && m == 1))
		s.str(yn(y == 2003 && q == 1))
		s.str(yn(y == 2003))
		if err := s.end(); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) genTime(s *sink) error {
	for t := int64(0); t < 86400; t++ {
		h, mi, se := t/3600, (t/60)%60, t%60
		s.i(t)
		s.str(bkey(t + 1))
		s.i(t)
		s.i(h)
		s.i(mi)
		s.i(se)
		s.str(map[bool]string{true: "AM", false: "PM"}[h < 12])
		switch {
		case h < 8:
			s.str("third")
		case h < 16:
			s.str("first")
		default:
			s.str("second")
		}
		switch {
		case h < 6 || h >= 20:
			s.str("night")
		case h < 12:
			s.str("morning")
		case h < 17:
			s.str("afternoon")
		default:
			s.str("evening")
		}
		switch {
		case h >= 6 && h <= 8:
			s.str("breakfast")
		case h >= 11 && h <= 13:
			s.str("lunch")
		case h >= 17 && h <= 20:
			s.str("dinner")
		default:
			s.null()
		}
		if err := s.end(); err != nil {
			return err
		}
	}
	return nil
}

// categories is the TPC-DS item hierarchy: category id i+1 and its classes.
var categories = []struct {
	name    string
	classes []string
}{
	{"Women", []string{"dresses", "fragrances", "maternity", "swimwear"}},
	{"Men", []string{"accessories", "pants", "shirts", "sports-apparel"}},
	{"Children", []string{"infants", "newborn", "school-uniforms", "toddlers"}},
	{"Shoes", []string{"athletic", "kids", "mens", "womens"}},
	{"Music", []string{"classical", "country", "pop", "rock"}},
	{"Jewelry", []string{"birdal", "bracelets", "consignment", "costume", "custom", "diamonds", "earings", "estate", "gold", "jewelry boxes", "loose stones", "mens watch", "pendants", "rings", "semi-precious", "womens watch"}},
	{"Home", []string{"accent", "bathroom", "bedding", "blinds/shades", "curtains/drapes", "decor", "flatware", "furniture", "glassware", "kids", "lighting", "mattresses", "paint", "rugs", "tables", "wallpaper"}},
	{"Sports", []string{"archery", "athletic shoes", "baseball", "basketball", "camping", "fishing", "fitness", "football", "golf", "guns", "hockey", "optics", "outdoor", "pools", "sailing", "tennis"}},
	{"Books", []string{"arts", "business", "computers", "cooking", "entertainments", "fiction", "history", "home repair", "mystery", "parenting", "reference", "romance", "science", "self-help", "sports", "travel"}},
	{"Electronics", []string{"audio", "automotive", "camcorders", "cameras", "disk drives", "dvd/vcr players", "karoke", "memory", "monitors", "musical", "personal", "portable", "scanners", "stereo", "televisions", "wireless"}},
}

var brandSyl = []string{"amalg", "edu pack", "exporti", "importo", "scholar", "corp", "univ", "maxi", "brand", "nameless"}

// pinnedBrands are brand names the TPC-DS queries look for, with the
// category/class combinations they must come with.
var pinnedBrands = []struct {
	cats, classes []string
	brands        []string
}{
	{[]string{"Books", "Children", "Electronics"}, []string{"personal", "portable", "reference", "self-help"},
		[]string{"scholaramalgamalg #14", "scholaramalgamalg #7", "exportiunivamalg #9", "scholaramalgamalg #9"}},
	{[]string{"Women", "Music", "Men"}, []string{"accessories", "classical", "fragrances", "pants"},
		[]string{"amalgimporto #1", "edu packscholar #1", "exportiimporto #1", "importoamalg #1"}},
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func (w *world) genItem(s *sink) error {
	st := stats()
	t := "item"
	catVL := st.vl(t, "i_category")
	sizeVL, colorVL, unitsVL, contVL := st.vl(t, "i_size"), st.vl(t, "i_color"), st.vl(t, "i_units"), st.vl(t, "i_container")
	startVL, endVL := st.vl(t, "i_rec_start_date"), st.vl(t, "i_rec_end_date")
	r := s.r
	for i := int64(1); i <= w.nItem; i++ {
		catName, catNull := catVL.sample(r)
		ci := 0
		for k, c := range categories {
			if c.name == catName {
				ci = k
			}
		}
		cls := categories[ci].classes
		cl := r.intn(len(cls))
		bn := int64(r.rangeInt(1, 16))
		brand := brandSyl[ci] + brandSyl[cl%10] + " #" + strconv.FormatInt(bn, 10)
		for _, p := range pinnedBrands {
			if contains(p.cats, catName) && contains(p.classes, cls[cl]) && r.chance(0.5) {
				brand = p.brands[r.intn(len(p.brands))]
			}
		}
		price := math.Exp(math.Log(0.09) + r.float()*(math.Log(99.99)-math.Log(0.09)))
		priceC := int64(price*100 + 0.5)
		s.i(i)
		s.str(bkey((i + 1) / 2))
		w.emitPick(s, startVL)
		w.emitPick(s, endVL)
		s.str(sentence(r, 4, 14))
		s.d(priceC)
		s.d(int64(float64(priceC) * (0.3 + 0.6*r.float())))
		s.i(int64(ci+1)*1000000 + int64(cl+1)*1000 + bn)
		s.str(brand)
		s.i(int64(cl + 1))
		s.strN(cls[cl], catNull)
		s.iN(int64(ci+1), catNull)
		s.strN(catName, catNull)
		mf := int64(r.rangeInt(1, 1000))
		s.i(mf)
		s.str(word(mf % 1000))
		// Only clothing has sizes; everything else is N/A, as in dsdgen.
		if ci <= 3 {
			v, null := sizeVL.sample(r)
			for v == "N/A" {
				v, null = sizeVL.sample(r)
			}
			s.strN(v, null)
		} else {
			s.str("N/A")
		}
		s.str(strconv.FormatInt(int64(r.rangeInt(1000000, 9999999)), 10) + strings.ReplaceAll(vocab[r.intn(len(vocab))], " ", "") + strconv.Itoa(r.rangeInt(100000, 999999)))
		s.pick(colorVL)
		s.pick(unitsVL)
		s.pick(contVL)
		s.i(int64(r.rangeInt(1, 100)))
		s.str(word(i))
		if err := s.end(); err != nil {
			return err
		}
	}
	return nil
}
