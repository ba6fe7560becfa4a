package hive

import (
	"os"
	"runtime"
	"sync"
)

// watcher lets a view skip checking a table whose folders the kernel
// says nobody touched since the table was last listed (Linux inotify;
// notify_linux.go). Checking the folders of a table partitioned by date
// is one stat per folder and one per file, thousands of system calls, on
// every query that names the table, whatever it then reads; with the
// table's folders watched, a query whose views find no event for them
// reuses the last built table without a system call.
//
// The freshness rule does not change (doc.go, "Freshness"): a change
// completed before a view looks the table up is seen by that view. That
// holds because the kernel queues an event within the system call that
// makes the change (write, truncate, utimes, create, unlink, rename,
// mkdir, close after writing), before the call returns, and a view reads
// every queued event (without blocking) before it decides. A watch is
// added to a folder before the folder is read, so a change either shows
// in the listing or queues an event; the table is served only while no
// event arrived for any of its folders since the listing began.
//
// Folders are watched for entries added, removed or renamed, and every
// file is watched itself, not only through its folder: a write through
// another hard link of the file notifies the file's watchers and that
// link's folder, not this one.
//
// What an event cannot see is never served without a check: a table whose
// listing met a symbolic link, a file on another device than its folder,
// or a folder on a file system whose changes may come from elsewhere (only
// local ones are watched: localFileSystem); a table whose watches could
// not all be added (the per-user limit) is checked as before. A lost event queue (overflow)
// makes every table suspect. A reader that still finds a changed file
// (ErrChanged; a change through a shared memory mapping queues no event)
// drops its table's entry, so the next query lists it again.
type watcher struct {
	mu     sync.Mutex
	n      notifier // nil until a table of minWatchedFolders folders is listed, or when unavailable
	failed bool     // opening the notifier failed: do not try again
	// byWatch maps a watch to the table folders listed through it.
	byWatch map[int32][]string
	// gens counts, per table folder, the events seen for its folders;
	// epoch counts lost event queues (every table then changed).
	gens  map[string]uint64
	epoch uint64
	// served is, per table folder, the table to return while its count
	// and the epoch are those it was listed under.
	served map[string]*servedTable
	// unwatchable are table folders a watch could not be added for: they
	// are checked by stat, and not watched again.
	unwatchable map[string]bool
}

// servedTable is a table and the event counts its listing began under.
type servedTable struct {
	mark  watchMark
	table *Table
}

// watchMark is what a listing began under: the table folder's event count,
// the epoch, the count of changed files readers found in it, and the
// folder's identity; ok is false when no notifier watches the listing.
type watchMark struct {
	gen, epoch, changed uint64
	folder              folderID
	ok                  bool
}

// changedFiles counts, per table folder, the files readers found changed
// (ErrChanged). It is process-wide, not per watcher, because a Table must
// hold only data (plans carry tables; no lock or cache may ride along),
// so a reader cannot reach the watcher that served its table.
var changedFiles = struct {
	sync.Mutex
	n map[string]uint64
}{n: map[string]uint64{}}

func readerFoundChange(dir string) {
	changedFiles.Lock()
	defer changedFiles.Unlock()
	changedFiles.n[dir]++
}

func changedCount(dir string) uint64 {
	changedFiles.Lock()
	defer changedFiles.Unlock()
	return changedFiles.n[dir]
}

// folderID tells a folder from another put in its place: renaming a
// folder above the table folder (the data directory swapped for another)
// queues no event for the table's own folders, so every lookup stats the
// table folder and compares.
type folderID struct{ dev, ino uint64 }

func folderIDOf(dir string) (folderID, bool) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return folderID{}, false
	}
	dev, ino, _, ok := fileIdentity(fi)
	return folderID{dev: dev, ino: ino}, ok
}

// notifier is the kernel's change notification (inotify on Linux).
type notifier interface {
	// add watches a folder or a file and returns the watch's id (the
	// same id for one watched already). It fails for a folder on a file
	// system whose changes the kernel may not see (localFileSystem).
	add(path string, folder bool) (int32, error)
	// drain reads every queued event without blocking and reports each:
	// the watch it came for, whether the watch ended (its folder removed),
	// and whether the queue overflowed (events were lost). A notifier
	// that fails is closed by its caller.
	drain(event func(wd int32, ended, overflow bool)) error
	close()
}

// minWatchedFolders is the size of table that opens a directory's
// notifier: checking a smaller table by stat costs less than a
// millisecond, and every open notifier counts against the per-user limit
// (128 by default), so a process holding many small catalogs must not
// use them up. Once a directory's notifier is open, every table of it is
// watched. A variable so tests can lower it.
var minWatchedFolders = 32

func newWatcher() *watcher {
	return &watcher{byWatch: map[int32][]string{}, gens: map[string]uint64{}, served: map[string]*servedTable{}, unwatchable: map[string]bool{}}
}

// drainLocked reads the queued events. w.mu is held.
func (w *watcher) drainLocked() {
	if w.n == nil {
		return
	}
	err := w.n.drain(func(wd int32, ended, overflow bool) {
		if overflow {
			w.epoch++
			return
		}
		for _, dir := range w.byWatch[wd] {
			w.gens[dir]++
		}
		if ended {
			delete(w.byWatch, wd)
		}
	})
	if err != nil {
		// Events may be lost: forget everything and check by stat from
		// now on.
		w.n.close()
		w.n, w.failed = nil, true
		w.epoch++
		w.served = map[string]*servedTable{}
	}
}

// lookup returns the table last listed in dir if no event arrived for its
// folders since that listing began, else nil.
func (w *watcher) lookup(dir string) *Table {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil {
		return nil
	}
	w.drainLocked()
	s := w.served[dir]
	if s == nil || s.mark.gen != w.gens[dir] || s.mark.epoch != w.epoch || s.mark.changed != changedCount(dir) {
		return nil
	}
	if id, ok := folderIDOf(dir); !ok || id != s.mark.folder {
		return nil
	}
	return s.table
}

// begin is called before the table in dir is listed: it reads the queued
// events, watches the table folder itself (so a marker or folder added
// from now on is an event) and returns the mark the listing begins
// under.
func (w *watcher) begin(dir string) watchMark {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil || w.unwatchable[dir] {
		return watchMark{}
	}
	w.drainLocked()
	if w.n == nil || !w.addLocked(dir, dir, true) {
		return watchMark{}
	}
	id, ok := folderIDOf(dir)
	return watchMark{gen: w.gens[dir], epoch: w.epoch, changed: changedCount(dir), folder: id, ok: ok}
}

// add watches a folder or file of the table in dir before it is read or
// stat'ed; false when it cannot be watched (the listing is then not
// served).
func (w *watcher) add(table, path string, folder bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.addLocked(table, path, folder)
}

func (w *watcher) addLocked(table, path string, folder bool) bool {
	if w.n == nil || w.unwatchable[table] {
		return false
	}
	wd, err := w.n.add(path, folder)
	if err != nil {
		// The limit, a file system not watched, a folder gone: check
		// this table by stat from now on.
		w.unwatchable[table] = true
		delete(w.served, table)
		return false
	}
	for _, t := range w.byWatch[wd] {
		if t == table {
			return true
		}
	}
	w.byWatch[wd] = append(w.byWatch[wd], table)
	return true
}

// commit records t as the table to serve for dir while no event arrives
// after m. A listing that was not watched throughout (m not ok, or some
// folder not watchable) is not committed.
func (w *watcher) commit(dir string, m watchMark, t *Table) {
	if !m.ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil || w.unwatchable[dir] {
		return
	}
	w.served[dir] = &servedTable{mark: m, table: t}
}

// open starts the notifier, once: a table of minWatchedFolders folders
// was listed. It reports whether a notifier is running.
func (w *watcher) open() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n != nil {
		return true
	}
	if w.failed {
		return false
	}
	n, err := openNotifier()
	if err != nil {
		w.failed = true
		return false
	}
	w.n = n
	// The catalog has no Close: the notifier's descriptor is closed when
	// the last view of the directory is collected.
	runtime.AddCleanup(w, func(n notifier) { n.close() }, n)
	return true
}

// active reports whether a notifier is running.
func (w *watcher) active() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n != nil
}

// forgetAll drops every served table (Refresh).
func (w *watcher) forgetAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.served = map[string]*servedTable{}
	w.unwatchable = map[string]bool{}
	w.epoch++
}
