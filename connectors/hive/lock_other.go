//go:build !unix

package hive

import (
	"fmt"
	"os"
)

// lockFile needs advisory file locks, which fsql uses only on Unix.
func lockFile(path string, wait bool) (*os.File, error) {
	return nil, fmt.Errorf("%w: writing tables needs Unix file locks (flock) to guard %s", ErrUnsupported, path)
}
