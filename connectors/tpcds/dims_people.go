package tpcds

import (
	"strconv"
	"strings"
)

var firstNames = strings.Fields(`James John Robert Michael William David Richard Charles Joseph Thomas Christopher Daniel Paul Mark Donald George Kenneth Steven Edward Brian Ronald Anthony Kevin Jason Matthew Gary Timothy Jose Larry Jeffrey Frank Scott Eric Stephen Andrew Raymond Gregory Joshua Jerry Dennis Walter Patrick Peter Harold Douglas Henry Carl Arthur Ryan Roger Mary Patricia Linda Barbara Elizabeth Jennifer Maria Susan Margaret Dorothy Lisa Nancy Karen Betty Helen Sandra Donna Carol Ruth Sharon Michelle Laura Sarah Kimberly Deborah Jessica Shirley Cynthia Angela Melissa Brenda Amy Anna Rebecca Virginia Kathleen Pamela Martha Debra Amanda Stephanie Carolyn Christine Marie Janet Catherine Frances Ann Joyce Diane Alice Julie Heather Teresa Doris Gloria Evelyn Jean Cheryl Mildred Katherine Joan Ashley Judith Rose Janice Kelly Nicole Judy Christina Kathy Theresa Beverly Denise Tammy Irene Jane Lori Rachel Marilyn Andrea Kathryn Louise Sara Anne Jacqueline Wanda Bonnie Julia Ruby Lois Tina Phyllis Norma Paula Diana Annie Lillian Emily Robin`)

var lastNames = strings.Fields(`Smith Johnson Williams Jones Brown Davis Miller Wilson Moore Taylor Anderson Thomas Jackson White Harris Martin Thompson Garcia Martinez Robinson Clark Rodriguez Lewis Lee Walker Hall Allen Young Hernandez King Wright Lopez Hill Scott Green Adams Baker Gonzalez Nelson Carter Mitchell Perez Roberts Turner Phillips Campbell Parker Evans Edwards Collins Stewart Sanchez Morris Rogers Reed Cook Morgan Bell Murphy Bailey Rivera Cooper Richardson Cox Howard Ward Torres Peterson Gray Ramirez James Watson Brooks Kelly Sanders Price Bennett Wood Barnes Ross Henderson Coleman Jenkins Perry Powell Long Patterson Hughes Flores Washington Butler Simmons Foster Gonzales Bryant Alexander Russell Griffin Diaz Hayes Myers Ford Hamilton Graham Sullivan Wallace Woods Cole West Jordan Owens Reynolds Fisher Ellis Harrison Gibson Mcdonald Cruz Marshall Ortiz Gomez Murray Freeman Wells Webb Simpson Stevens Tucker Porter Hunter Hicks Crawford Henry Boyd Mason Morales Kennedy Warren Dixon Ramos Reyes Burns Gordon Shaw Holmes Rice Robertson Hunt Black Daniels Palmer Mills Nichols Grant Knight Ferguson Rose Stone Hawkins Dunn Perkins Hudson Spencer Gardner Stephens Payne Pierce Berry Matthews Arnold Wagner Willis Ray Watkins Olson Carroll Duncan Snyder Hart Cunningham Bradley Lane Andrews Ruiz Harper Fox Riley Armstrong Carpenter Weaver Greene Lawrence Elliott Chavez Sims Austin Peters Kelley Franklin Lawson`)

var countries = strings.Fields(`UNITED_STATES CANADA MEXICO BRAZIL ARGENTINA CHILE PERU GERMANY FRANCE ITALY SPAIN PORTUGAL IRELAND NORWAY SWEDEN FINLAND DENMARK POLAND AUSTRIA SWITZERLAND BELGIUM NETHERLANDS GREECE TURKEY EGYPT MOROCCO NIGERIA KENYA ETHIOPIA INDIA CHINA JAPAN KOREA VIETNAM THAILAND INDONESIA PHILIPPINES AUSTRALIA NEW_ZEALAND ICELAND AFGHANISTAN ZIMBABWE`)

var streetNames = strings.Fields(`Oak Elm Maple Pine Cedar Main Park Lake Hill Church Spring Sunset Ridge Valley Forest River Highland Walnut Willow Jackson Lincoln Washington Johnson Adams Madison Franklin Center Cherry Dogwood Hickory Poplar Birch Ash Railroad Mill College View Meadow Smith Wilson Green Second Third Fourth Fifth Sixth Seventh Eighth Ninth Tenth 1st 2nd 3rd 4th 5th 6th 7th 8th 9th 10th 11th 12th 13th 14th 15th`)

var cities = strings.Fields(`Fairview Midway Hopewell Oakland Riverside Greenwood Franklin Clinton Springfield Salem Georgetown Marion Oak_Grove Pleasant_Hill Centerville Mount_Zion Five_Points Liberty Union Shiloh Harmony Glendale Lakeside Bethel Friendship Jamestown Newport Waterloo Arlington Oak_Hill Concord Sulphur_Springs Woodland Spring_Hill Highland_Park Walnut_Grove Lebanon Mount_Olive Red_Hill Antioch Summit Wildwood Plainview Enterprise Kingston Edgewood Forest_Hills Pleasant_Valley Unionville Wilson White_Oak Green_Acres Bridgeport Ashland Belmont Brownsville Florence Glenwood Hamilton Lakewood Lincoln Macedonia Mountain_View Newtown Riverdale Spring_Valley Stringtown Sunnyside Valley_View Woodville`)

var counties = strings.Fields(`Williamson_County Walker_County Richland_County Gaines_County Douglas_County Dona_Ana_County Franklin_County Jefferson_County Washington_County Jackson_County Lincoln_County Madison_County Montgomery_County Marion_County Monroe_County Clay_County Union_County Wayne_County Warren_County Greene_County Marshall_County Fayette_County Polk_County Lee_County Grant_County Clark_County Adams_County Morgan_County Shelby_County Carroll_County Lake_County Crawford_County Hancock_County Perry_County Brown_County Johnson_County Putnam_County Scott_County Benton_County Calhoun_County Boone_County Ziebach_County Abbeville_County Oglethorpe_County Luce_County Barrow_County Huron_County Daviess_County Terrell_County Mesa_County`)

// countyOf picks one of the five counties of a state.
func countyOf(state string, r *rng) string {
	k := r.intn(5)
	if state == "TN" && k < 2 {
		return "Williamson_County"
	}
	return counties[(hashString(state)+uint64(k)*7)%uint64(len(counties))]
}

func spaced(s string) string { return strings.ReplaceAll(s, "_", " ") }

// zipPool lists the zip codes addresses use: the ones the queries look for
// and a fixed set of others, about as many distinct zips as dsdgen makes.
func (w *world) zipPool() []string {
	pool := append([]string(nil), stats().queryZips...)
	r := newRNG(w.seed, hashString("zip-pool"))
	for len(pool) < 4300 {
		pool = append(pool, strconv.Itoa(10000 + r.intn(89982))[0:5])
	}
	return pool
}

func (w *world) genCustomer(s *sink) error {
	st := stats()
	sal, flag := st.vl("customer", "c_salutation"), st.vl("customer", "c_preferred_cust_flag")
	bday, bmon, byear := st.vl("customer", "c_birth_day"), st.vl("customer", "c_birth_month"), st.vl("customer", "c_birth_year")
	r := s.r
	for i := int64(1); i <= w.nCustomer; i++ {
		s.i(i)
		s.str(bkey(i))
		s.i(1 + int64(r.intn(int(w.nCDemo))))
		s.i(1 + int64(r.intn(int(w.nHDemo))))
		s.i(1 + int64(r.intn(int(w.nAddress))))
		first := 2448998 + int64(r.intn(2452648-2448998+1))
		s.i(first + 30)
		s.i(first)
		s.pick(sal)
		fn, ln := firstNames[r.intn(len(firstNames))], lastNames[r.intn(len(lastNames))]
		s.str(fn)
		s.str(ln)
		s.pick(flag)
		w.emitPick(s, bday)
		w.emitPick(s, bmon)
		w.emitPick(s, byear)
		s.str(spaced(countries[r.intn(len(countries))]))
		s.null() // c_login is always NULL in dsdgen's output
		s.str(fn + "." + ln + "@" + bkey(int64(r.rangeInt(1, 1<<30)))[8:] + ".com")
		s.i(2452283 + int64(r.intn(366)))
		if err := s.end(); err != nil {
			return err
		}
	}
	return nil
}

// emitPick writes a value sampled from a value list in the column's type.
func (w *world) emitPick(s *sink, v *valueList) {
	val, null := v.sample(s.r)
	w.emitText(s, s.t.cols[s.col], val, null)
}

func (w *world) genAddress(s *sink) error {
	st := stats()
	t := "customer_address"
	stype, suite, state := st.vl(t, "ca_street_type"), st.vl(t, "ca_suite_number"), st.vl(t, "ca_state")
	country, gmt, loc := st.vl(t, "ca_country"), st.vl(t, "ca_gmt_offset"), st.vl(t, "ca_location_type")
	zips := w.zipPool()
	r := s.r
	for i := int64(1); i <= w.nAddress; i++ {
		s.i(i)
		s.str(bkey(i))
		s.str(strconv.Itoa(r.rangeInt(1, 999)))
		s.str(streetNames[r.intn(len(streetNames))] + " " + streetNames[r.intn(len(streetNames))])
		s.pick(stype)
		s.pick(suite)
		// Cities, counties and zips are correlated the way the queries
		// expect: the store towns (Midway, Fairview) are common and often
		// carry the stores' zips, and counties belong to states (Williamson
		// County, where the stores are, is in TN).
		city := cities[r.intn(len(cities))]
		switch x := r.float(); {
		case x < 0.03:
			city = "Midway"
		case x < 0.06:
			city = "Fairview"
		}
		stateVal, stateNull := state.sample(r)
		zip := zips[r.intn(len(zips))]
		if city == "Midway" && r.chance(0.5) {
			zip = "31904"
		} else if city == "Fairview" && r.chance(0.5) {
			zip = "35709"
		}
		s.str(spaced(city))
		s.str(spaced(countyOf(stateVal, r)))
		s.strN(stateVal, stateNull)
		s.str(zip)
		s.pick(country)
		w.emitPick(s, gmt)
		s.pick(loc)
		if err := s.end(); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) genCDemo(s *sink) error {
	st := stats()
	t := "customer_demographics"
	gender := st.vl(t, "cd_gender").nonNull()
	marital := st.vl(t, "cd_marital_status").nonNull()
	edu := st.vl(t, "cd_education_status").nonNull()
	credit := st.vl(t, "cd_credit_rating").nonNull()
	// Cross product in dsdgen's order: gender varies fastest.
	var i int64
	for c := 0; c < 7; c++ {
		for e := 0; e < 7; e++ {
			for d := 0; d < 7; d++ {
				for cr := range credit {
					for pe := 0; pe < 20; pe++ {
						for ed := range edu {
							for m := range marital {
								for g := range gender {
									i++
									s.i(i)
									s.strN(gender[g], false)
									s.strN(marital[m], false)
									s.strN(edu[ed], false)
									s.iN(int64(500+pe*500), false)
									s.strN(credit[cr], false)
									s.iN(int64(d), false)
									s.iN(int64(e), false)
									s.iN(int64(c), false)
									if err := s.end(); err != nil {
										return err
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return nil
}

var buyPotential = []string{"0-500", "501-1000", "1001-5000", "5001-10000", ">10000", "Unknown"}

func (w *world) genHDemo(s *sink) error {
	var i int64
	for v := -1; v <= 4; v++ {
		for d := 0; d < 10; d++ {
			for b := 0; b < 6; b++ {
				for ib := int64(1); ib <= 20; ib++ {
					i++
					s.i(i)
					s.iN(ib, false)
					s.strN(buyPotential[b], false)
					s.iN(int64(d), false)
					s.iN(int64(v), false)
					if err := s.end(); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func (w *world) genIncomeBand(s *sink) error {
	for i := int64(1); i <= 20; i++ {
		s.i(i)
		lo := (i-1)*10000 + 1
		if i == 1 {
			lo = 0
		}
		s.iN(lo, false)
		s.iN(i*10000, false)
		if err := s.end(); err != nil {
			return err
		}
	}
	return nil
}
