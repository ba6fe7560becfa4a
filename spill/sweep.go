package spill

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// staleSetup is how old a half-made folder (created, not yet locked and
// renamed) must be before Sweep takes it for a crash's leftover.
const staleSetup = 10 * time.Minute

// Sweep removes, in each of dirs (os.TempDir() when empty), the spill
// folders whose owner is gone: run folders whose lock nobody holds (the
// process that made them crashed or was killed before it could clean up)
// and half-made folders older than a few minutes. It returns the folders
// it removed. A folder another running engine owns is never touched. A
// directory that does not exist has nothing to sweep; other errors are
// returned after the rest was swept.
func Sweep(dirs []string) ([]string, error) {
	if !locksWork {
		return nil, nil
	}
	if len(dirs) == 0 {
		dirs = []string{os.TempDir()}
	}
	var removed []string
	var first error
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && first == nil {
				first = dirErr(dir, err)
			}
			continue
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			path := filepath.Join(dir, e.Name())
			switch {
			case strings.HasPrefix(e.Name(), Prefix):
				if ownerGone(path) {
					if err := os.RemoveAll(path); err == nil {
						removed = append(removed, path)
					} else if first == nil {
						first = dirErr(dir, err)
					}
				}
			case strings.HasPrefix(e.Name(), newPrefix):
				if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleSetup {
					if os.RemoveAll(path) == nil {
						removed = append(removed, path)
					}
				}
			}
		}
	}
	return removed, first
}

// ownerGone reports whether nobody holds the lock of the run folder at
// path. A folder without its lock file was damaged by hand: gone too.
func ownerGone(path string) bool {
	f, err := os.OpenFile(filepath.Join(path, lockName), os.O_RDWR, 0)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	defer f.Close()
	// Holding the lock now means its owner is gone; failing for any
	// reason (most often: it is held) leaves the folder alone.
	return lockFile(f) == nil
}
