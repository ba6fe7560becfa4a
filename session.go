package fsql

import (
	"context"
	"sync"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/runtime"
	"github.com/fsql-dev/fsql/sql"
)

// Session runs statements with settings of its own: SET changes them for
// the session's later statements and for no other caller. It starts
// from the engine's Config (the one given to Open). Every key can be set:
// a session whose catalog settings (csv.*, parquet.nanos-truncate,
// path-tables.outside-data-dir) differ from the engine's reads through a
// catalog opened with its settings, and one whose worker settings differ
// runs on workers of its own shape. A session may not widen
// path-tables.outside-data-dir beyond the engine's. The command line runs
// its prompt and each -e or -f script in one session.
//
// A Session may be used from several goroutines; each statement runs
// with the settings of the moment it starts, and a statement already
// running is not affected by a later SET.
type Session struct {
	eng *Engine
	mu  sync.Mutex
	cfg Config
}

// Session returns a new session over the engine's tables, starting from
// the engine's settings.
func (e *Engine) Session() *Session { return &Session{eng: e, cfg: e.cfg} }

// Config returns the session's current settings.
func (s *Session) Config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// Set changes one setting of the session, as SET key = 'value' does.
func (s *Session) Set(key, value string) error {
	return classify(s.apply([]sql.Assignment{{Key: key, Value: value}}))
}

// Query runs one statement in the session, as Engine.Query does; SET
// changes the session's settings and returns no columns and no rows.
//
// args are the values of the statement's ? markers, in order: never
// spliced into the text, each is one typed constant:
//
//	nil (or a nil pointer)               NULL
//	bool                                 1 or 0 (BIGINT; MySQL's TRUE and FALSE)
//	int, int8..int64, uint8..uint64      BIGINT (a uint64 above 2^63-1 fails)
//	float32, float64                     DOUBLE (NaN and infinities fail)
//	string, []byte                       VARCHAR
//	Decimal ("12.50")                    DECIMAL(4,2): the digits as written
//	time.Time                            DATETIME (its wall clock in its location; microseconds)
//	driver.Valuer (sql.NullInt64, ...)   its Value(), as above
//
// Named types take their underlying kind (type ID int64 is BIGINT); any
// other type fails naming it. The number of args must equal the number of
// markers.
func (s *Session) Query(ctx context.Context, query string, args ...any) (*Rows, error) {
	res, err := s.resources()
	if err != nil {
		return nil, classify(err)
	}
	rows, err := s.eng.query(ctx, s, res, query, args)
	return rows, classify(err)
}

// resources are the settings a statement starts with and the catalog
// and workers they call for.
func (s *Session) resources() (resources, error) {
	e := s.eng
	cfg := s.Config()
	res := resources{cfg: cfg, catalog: e.catalog, workers: e.workers, blocklist: e.blocklist}
	if opts := cfg.catalogOptions(); opts != e.cfg.catalogOptions() {
		c, err := e.catalogs.get(e.dir, opts, e.mem)
		if err != nil {
			return resources{}, err
		}
		res.catalog = c
	}
	if cfg.TaskManagers != e.cfg.TaskManagers || cfg.Slots != e.cfg.Slots {
		res.workers = runtime.NewLocalPool(cfg.TaskManagers, cfg.Slots)
		res.blocklist = nil // other workers than the engine's blocklist names
	}
	return res, nil
}

// catalogSet holds the catalogs opened with options other than the
// engine's, one per set of options, so sessions that agree share one
// (and its footer cache) and Engine.Refresh reaches them all.
type catalogSet struct {
	mu   sync.Mutex
	byOp map[hive.Options]*hive.Catalog
}

// maxCatalogs bounds the catalogs a long-lived engine keeps for
// sessions; past it they are dropped and opened again as needed.
const maxCatalogs = 16

func (cs *catalogSet) get(dir string, opts hive.Options, mem hive.MemorySource) (*hive.Catalog, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c, ok := cs.byOp[opts]; ok {
		return c, nil
	}
	c, err := hive.OpenWithMemory(dir, opts, mem)
	if err != nil {
		return nil, errs.Wrap(errs.IO, "opening the catalog with the session's settings: %w", err)
	}
	if cs.byOp == nil || len(cs.byOp) >= maxCatalogs {
		cs.byOp = map[hive.Options]*hive.Catalog{}
	}
	cs.byOp[opts] = c
	return c, nil
}

func (cs *catalogSet) all() []*hive.Catalog {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	out := make([]*hive.Catalog, 0, len(cs.byOp))
	for _, c := range cs.byOp {
		out = append(out, c)
	}
	return out
}

// Exec runs one statement in the session and discards its rows: for SET,
// or to run a query for its errors.
func (s *Session) Exec(ctx context.Context, query string, args ...any) error {
	rows, err := s.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

// Decimal is an exact decimal parameter value written as text, such as
// "12.50", for a ? marker: it binds as the literal 12.50 would,
// DECIMAL(4,2). (A string argument binds as VARCHAR, and a float as
// DOUBLE.)
type Decimal = sql.Decimal

// apply applies a SET statement's assignments all or none: each key is
// looked up and parsed in order, then the whole result is checked (a
// parallelism must fit the key groups) before the session takes it.
// DEFAULT is DefaultConfig's value.
func (s *Session) apply(as []sql.Assignment) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg := s.cfg
	def := DefaultConfig()
	for _, a := range as {
		v := a.Value
		if a.Default {
			d, err := def.Get(a.Key)
			if err != nil {
				return errs.Wrap(errs.Semantic, "SET %s = DEFAULT: %w", a.Key, err)
			}
			v = d
		}
		if name, err := cfg.set(a.Key, v); err != nil {
			if name == "" {
				return err // an unknown key, with the closest ones
			}
			return errs.New(errs.ErWrongValueForVar, "SET %s: %w", name, err)
		}
	}
	for _, k := range ConfigKeys() {
		if c := configKeys[k].sessionCheck; c != nil {
			if err := c(&s.eng.cfg, &cfg); err != nil {
				return errs.New(errs.ErWrongValueForVar, "SET %s: %w", k, err)
			}
		}
	}
	if err := cfg.check(); err != nil {
		return errs.Wrap(errs.Semantic, "SET: %w", err)
	}
	s.cfg = cfg
	return nil
}
