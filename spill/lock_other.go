//go:build !unix

package spill

import "os"

// locksWork is false where flock is missing: folders are not locked, and
// Sweep leaves every folder alone rather than guess whether its owner
// still runs.
const locksWork = false

func lockFile(*os.File) error { return nil }
