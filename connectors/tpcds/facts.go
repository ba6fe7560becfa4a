package tpcds

// saleLine is one generated sales line, kept so returns can copy it.
type saleLine struct {
	date, time, shipDate                int64 // date -1 = NULL
	item, ticket                        int64
	customer, cdemo, hdemo, addr        int64 // bill side (store: the customer)
	shipCustomer, shipCdemo, shipHdemo  int64
	shipAddr                            int64
	store, callCenter, catalogPage      int64 // store: store; catalog: call center, page
	webPage, webSite, shipMode, warehse int64
	promo, qty                          int64
	wholesale, list, sales              int64 // cents
	extDisc, extSales, extWhole         int64
	extList, extTax, coupon, extShip    int64
	netPaid, netPaidTax                 int64
	netPaidShip, netPaidShipTax, profit int64
	taxRate                             float64
}

func (w *world) lineCount(c *channel, ticket int64) int {
	r := newRNG(w.seed, hashString(c.sales)+1, uint64(ticket))
	return c.minLines + r.intn(c.maxLines-c.minLines+1)
}

func (w *world) pick(r *rng, n int64) int64 { return 1 + int64(r.intn(int(n))) }

// genTicket regenerates all lines of one ticket (order). Everything comes
// from the ticket's own random stream, so returns can rebuild any line.
func (w *world) genTicket(c *channel, dateSK int64, ticket int64, out []saleLine) []saleLine {
	out = out[:0]
	n := w.lineCount(c, ticket)
	r := newRNG(w.seed, hashString(c.sales), uint64(ticket))
	var base saleLine
	base.date = dateSK
	base.ticket = ticket
	if c.name == "store" {
		base.time = int64(r.rangeInt(28800, 75599))
	} else {
		base.time = int64(r.intn(86400))
	}
	base.customer = w.pick(r, w.nCustomer)
	base.cdemo = w.pick(r, w.nCDemo)
	base.hdemo = w.pick(r, w.nHDemo)
	base.addr = w.pick(r, w.nAddress)
	if r.chance(0.5) {
		base.shipCustomer, base.shipCdemo, base.shipHdemo, base.shipAddr = base.customer, base.cdemo, base.hdemo, base.addr
	} else {
		base.shipCustomer = w.pick(r, w.nCustomer)
		base.shipCdemo = w.pick(r, w.nCDemo)
		base.shipHdemo = w.pick(r, w.nHDemo)
		base.shipAddr = w.pick(r, w.nAddress)
	}
	base.store = w.pick(r, w.nStore)
	base.callCenter = w.pick(r, w.nCallCenter)
	base.catalogPage = w.pick(r, w.nCatalogPage)
	base.webPage = w.pick(r, w.nWebPage)
	base.webSite = w.pick(r, w.nWebSite)
	base.taxRate = float64(r.intn(10)) / 100
	start := int64(r.intn(int(w.nItem)))
	stride := 1 + int64(r.intn(int(w.nItem)/int(c.maxLines+1)))
	maxPrice := 30000.0
	if c.name == "store" {
		maxPrice = 20000
	}
	// Some catalog orders repurchase an item a customer returned to a
	// store (queries 17, 25 and 29 follow that path).
	var linkItem int64
	if c.name == "catalog" && dateSK > 0 && r.chance(0.15) {
		if sd := int(dateSK-salesFirstSK) - r.rangeInt(1, 150); sd >= 0 {
			sc := w.ch["store"]
			picks := w.returnPicks(sc, sd, nil)
			if len(picks) > 0 {
				p := picks[r.intn(len(picks))]
				sl := w.genTicket(sc, dateOf(sd), p.ticket, nil)
				base.customer = sl[p.line].customer
				linkItem = sl[p.line].item
			}
		}
	}
	nHot := w.nItem / 100
	for k := 0; k < n; k++ {
		l := base
		// Item popularity is skewed: a quarter of the lines sell one of the
		// 1% hot items (query 23 looks for items sold often on one day).
		l.item = (start+int64(k)*stride)%w.nItem + 1
		if r.chance(0.25) {
			l.item = (int64(r.intn(int(nHot)))*7919)%w.nItem + 1
		}
		if k == 0 && linkItem > 0 {
			l.item = linkItem
		}
		for again := true; again; {
			again = false
			for j := range out {
				if out[j].item == l.item {
					l.item = l.item%w.nItem + 1
					again = true
				}
			}
		}
		// A line without a sold date has no ship date either (NULL, as in
		// dsdgen's data), not the key 0 that no date_dim row has.
		l.shipDate = -1
		if dateSK > 0 {
			l.shipDate = dateSK + int64(r.rangeInt(2, 90))
		}
		l.shipMode = w.pick(r, w.nShipMode)
		l.warehse = w.pick(r, w.nWarehouse)
		l.promo = w.pick(r, w.nPromo)
		l.qty = int64(r.rangeInt(1, 100))
		l.wholesale = int64(r.rangeInt(100, 10000))
		markup := 1 + r.float()
		if c.name != "store" {
			markup = 1 + 2*r.float()
		}
		list := float64(l.wholesale) * markup
		if list > maxPrice {
			list = maxPrice
		}
		l.list = int64(list)
		l.sales = int64(float64(l.list) * r.float())
		l.extDisc = (l.list - l.sales) * l.qty
		l.extSales = l.sales * l.qty
		l.extWhole = l.wholesale * l.qty
		l.extList = l.list * l.qty
		if r.chance(0.2) {
			l.coupon = int64(float64(l.extSales) * r.float())
		}
		l.netPaid = l.extSales - l.coupon
		l.extTax = int64(float64(l.netPaid)*l.taxRate + 0.5)
		l.netPaidTax = l.netPaid + l.extTax
		l.extShip = int64(float64(l.extList) * 0.5 * r.float())
		l.netPaidShip = l.netPaid + l.extShip
		l.netPaidShipTax = l.netPaidTax + l.extShip
		l.profit = l.netPaid - l.extWhole
		out = append(out, l)
	}
	return out
}

func dateOf(dayIdx int) int64 {
	if dayIdx >= salesDays {
		return -1
	}
	return salesFirstSK + int64(dayIdx)
}

// salesPart writes the sales lines sold on one day (dayIdx salesDays = NULL date).
func (w *world) salesPart(c *channel, dayIdx int, s *sink) error {
	var buf []saleLine
	d := dateOf(dayIdx)
	for t := c.first[dayIdx]; t < c.first[dayIdx]+c.tickets[dayIdx]; t++ {
		buf = w.genTicket(c, d, t, buf)
		for i := range buf {
			var err error
			switch c.name {
			case "store":
				err = w.emitStoreSale(s, &buf[i])
			case "catalog":
				err = w.emitCatalogSale(s, &buf[i])
			default:
				err = w.emitWebSale(s, &buf[i])
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// key writes a date key; v < 0 is NULL. The partition column's NULLs are
// exactly the rows of its NULL partition: no random NULLs on top, which the
// partitioned layout could not store and the flat layout would then not
// share with it. Other date keys get their column's NULL fraction.
func (s *sink) key(v int64) {
	if v < 0 {
		if s.col != s.t.partKey {
			// Draw the NULL fraction's number all the same: the row's
			// later columns then take the values they take for a key.
			s.autoNull()
		}
		s.null()
		return
	}
	if s.col == s.t.partKey {
		s.iN(v, false)
		return
	}
	s.i(v)
}

func (w *world) emitStoreSale(s *sink, l *saleLine) error {
	s.key(l.date)
	s.i(l.time)
	s.i(l.item)
	s.i(l.customer)
	s.i(l.cdemo)
	s.i(l.hdemo)
	s.i(l.addr)
	s.i(l.store)
	s.i(l.promo)
	s.i(l.ticket)
	s.i(l.qty)
	s.d(l.wholesale)
	s.d(l.list)
	s.d(l.sales)
	s.d(l.extDisc)
	s.d(l.extSales)
	s.d(l.extWhole)
	s.d(l.extList)
	s.d(l.extTax)
	s.d(l.coupon)
	s.d(l.netPaid)
	s.d(l.netPaidTax)
	s.d(l.profit)
	return s.end()
}

func (w *world) emitPricing(s *sink, l *saleLine) {
	s.i(l.qty)
	s.d(l.wholesale)
	s.d(l.list)
	s.d(l.sales)
	s.d(l.extDisc)
	s.d(l.extSales)
	s.d(l.extWhole)
	s.d(l.extList)
	s.d(l.extTax)
	s.d(l.coupon)
	s.d(l.extShip)
	s.d(l.netPaid)
	s.d(l.netPaidTax)
	s.d(l.netPaidShip)
	s.d(l.netPaidShipTax)
	s.d(l.profit)
}

func (w *world) emitCatalogSale(s *sink, l *saleLine) error {
	s.key(l.date)
	s.i(l.time)
	s.key(l.shipDate)
	s.i(l.customer)
	s.i(l.cdemo)
	s.i(l.hdemo)
	s.i(l.addr)
	s.i(l.shipCustomer)
	s.i(l.shipCdemo)
	s.i(l.shipHdemo)
	s.i(l.shipAddr)
	s.i(l.callCenter)
	s.i(l.catalogPage)
	s.i(l.shipMode)
	s.i(l.warehse)
	s.i(l.item)
	s.i(l.promo)
	s.i(l.ticket)
	w.emitPricing(s, l)
	return s.end()
}

func (w *world) emitWebSale(s *sink, l *saleLine) error {
	s.key(l.date)
	s.i(l.time)
	s.key(l.shipDate)
	s.i(l.item)
	s.i(l.customer)
	s.i(l.cdemo)
	s.i(l.hdemo)
	s.i(l.addr)
	s.i(l.shipCustomer)
	s.i(l.shipCdemo)
	s.i(l.shipHdemo)
	s.i(l.shipAddr)
	s.i(l.webPage)
	s.i(l.webSite)
	s.i(l.shipMode)
	s.i(l.warehse)
	s.i(l.promo)
	s.i(l.ticket)
	w.emitPricing(s, l)
	return s.end()
}

// returnPick is a sales line chosen for return, with its return lag in
// days (-1: the return date is NULL).
type returnPick struct {
	ticket int64
	line   int
	lag    int
}

// returnPicks lists the returned lines of one sale day. It costs time in
// proportion to the returns, not the lines, of that day.
func (w *world) returnPicks(c *channel, dayIdx int, out []returnPick) []returnPick {
	out = out[:0]
	r := newRNG(w.seed, hashString(c.returns), uint64(dayIdx))
	nullFrac := stats().summary[c.returns+"."+w.tabs[c.returns].cols[w.tabs[c.returns].partKey].name].nullFrac
	pos := r.geometricSkip(c.returnFrac)
	t := c.first[dayIdx]
	end := c.first[dayIdx] + c.tickets[dayIdx]
	base := 0
	for t < end {
		n := w.lineCount(c, t)
		for pos < base+n {
			lag := 1 + r.intn(c.maxLag)
			if r.chance(nullFrac) {
				lag = -1
			}
			out = append(out, returnPick{ticket: t, line: pos - base, lag: lag})
			pos += 1 + r.geometricSkip(c.returnFrac)
		}
		base += n
		t++
	}
	return out
}

// returnsPart writes the returns dated retSK (-1: NULL return date).
func (w *world) returnsPart(c *channel, retSK int64, s *sink) error {
	var picks []returnPick
	var lines []saleLine
	lo, hi := 0, salesDays-1
	if retSK > 0 {
		lo = int(retSK-salesFirstSK) - c.maxLag
		hi = int(retSK-salesFirstSK) - 1
		if lo < 0 {
			lo = 0
		}
		if hi > salesDays-1 {
			hi = salesDays - 1
		}
	}
	for d := lo; d <= hi; d++ {
		picks = w.returnPicks(c, d, picks)
		for _, p := range picks {
			if retSK < 0 && p.lag >= 0 || retSK > 0 && (p.lag < 0 || dateOf(d)+int64(p.lag) != retSK) {
				continue
			}
			lines = w.genTicket(c, dateOf(d), p.ticket, lines)
			l := &lines[p.line]
			rr := newRNG(w.seed, hashString(c.returns)+7, uint64(p.ticket), uint64(p.line))
			if err := w.emitReturn(c, s, l, retSK, rr); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *world) emitReturn(c *channel, s *sink, l *saleLine, retSK int64, r *rng) error {
	qty := int64(r.rangeInt(1, int(l.qty)))
	amt := l.sales * qty
	tax := int64(float64(amt)*l.taxRate + 0.5)
	inc := amt + tax
	fee := int64(r.rangeInt(50, 10000))
	ship := int64(float64(l.wholesale*qty) * 0.5 * r.float())
	cash := int64(float64(inc) * r.float())
	rest := inc - cash
	reversed := int64(float64(rest) * r.float())
	credit := rest - reversed
	loss := fee + ship + int64(float64(tax)*r.float())
	s.key(retSK)
	switch c.name {
	case "store":
		s.i(int64(r.rangeInt(28799, 61199)))
		s.i(l.item)
		s.i(l.customer)
		s.i(l.cdemo)
		s.i(l.hdemo)
		s.i(l.addr)
		s.i(l.store)
		s.i(w.pick(r, w.nReason))
		s.i(l.ticket)
	case "catalog":
		s.i(int64(r.intn(86400)))
		s.i(l.item)
		s.i(l.customer)
		s.i(l.cdemo)
		s.i(l.hdemo)
		s.i(l.addr)
		s.i(l.shipCustomer)
		s.i(l.shipCdemo)
		s.i(l.shipHdemo)
		s.i(l.shipAddr)
		s.i(l.callCenter)
		s.i(l.catalogPage)
		s.i(l.shipMode)
		s.i(l.warehse)
		s.i(w.pick(r, w.nReason))
		s.i(l.ticket)
	default:
		s.i(int64(r.intn(86400)))
		s.i(l.item)
		s.i(l.customer)
		s.i(l.cdemo)
		s.i(l.hdemo)
		s.i(l.addr)
		s.i(l.shipCustomer)
		s.i(l.shipCdemo)
		s.i(l.shipHdemo)
		s.i(l.shipAddr)
		s.i(l.webPage)
		s.i(w.pick(r, w.nReason))
		s.i(l.ticket)
	}
	s.i(qty)
	s.d(amt)
	s.d(tax)
	s.d(inc)
	s.d(fee)
	s.d(ship)
	s.d(cash)
	s.d(reversed)
	s.d(credit)
	s.d(loss)
	return s.end()
}

// inventoryPart writes one weekly inventory snapshot.
func (w *world) inventoryPart(week int64, s *sink) error {
	for item := int64(1); item <= w.nItem; item += 2 {
		for wh := int64(1); wh <= w.nWarehouse; wh++ {
			s.iN(week, false)
			s.iN(item, false)
			s.iN(wh, false)
			s.i(int64(s.r.intn(1001)))
			if err := s.end(); err != nil {
				return err
			}
		}
	}
	return nil
}
