package tpcds

// civil converts a Julian day number to year, month, day.
func civil(jd int64) (int, int, int) {
	a := jd + 32044
	b := (4*a + 3) / 146097
	c := a - 146097*b/4
	d := (4*c + 3) / 1461
	e := c - 1461*d/4
	m := (5*e + 2) / 153
	day := e - (153*m+2)/5 + 1
	month := m + 3 - 12*(m/10)
	year := 100*b + d - 4800 + m/10
	return int(year), int(month), int(day)
}

// julian converts year, month, day to a Julian day number.
func julian(y, m, d int) int64 {
	a := int64((14 - m) / 12)
	yy := int64(y) + 4800 - a
	mm := int64(m) + 12*a - 3
	return int64(d) + (153*mm+2)/5 + 365*yy + yy/4 - yy/100 + yy/400 - 32045
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// dow returns the day of week, 0 = Sunday.
func dow(jd int64) int { return int((jd + 1) % 7) }

var dayNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// inventoryWeeks lists the weekly inventory snapshot dates.
func inventoryWeeks() []int64 {
	var out []int64
	for d := int64(2450815); d <= 2452635; d += 7 {
		out = append(out, d)
	}
	return out
}
