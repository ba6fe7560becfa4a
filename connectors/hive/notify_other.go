//go:build !linux

package hive

import (
	"errors"
	"io/fs"
)

// Without inotify every table is checked by stat on every query.
func openNotifier() (notifier, error) {
	return nil, errors.New("no change notification on this system")
}

func fileIdentity(fs.FileInfo) (dev, ino, links uint64, ok bool) { return 0, 0, 0, false }
