//go:build unix

package spill

import (
	"os"
	"syscall"
)

// locksWork says folders are locked, so Sweep can tell a crashed
// owner's folder from a live one.
const locksWork = true

// lockFile takes an exclusive advisory lock on f without waiting; the
// kernel drops it when the process ends, however it ends.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
