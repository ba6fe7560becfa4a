package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fsql-dev/fsql/connectors/tpcds"
)

// defaultScale is the TPC-DS scale of the data set fsql uses when no
// --data is given: small enough to write in seconds on first use.
const defaultScale = 0.01

// defaultDataDir is where the TPC-DS data set of a scale lives when the
// user names no folder: <user cache>/fsql/tpcds-sf<scale>-g<version>,
// <user cache>/fsql/tpcds-sf<scale>-flat-g<version> for the flat layout
// (the generator's version, so a set an older generator wrote is not
// taken for the current one's).
func defaultDataDir(scale float64, flat bool) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache folder to keep the default data set in (%v); pass --data DIR", err)
	}
	name := "tpcds-sf" + strconv.FormatFloat(scale, 'f', -1, 64)
	if flat {
		name += "-flat"
	}
	return filepath.Join(cache, "fsql", tpcds.CacheFolder(name)), nil
}

// dataDir returns the folder to query: the one the user named, which must
// exist, or the default TPC-DS set of the scale, generated if missing.
func dataDir(ctx context.Context, named string, scale float64, stderr io.Writer) (string, error) {
	if named != "" {
		st, err := os.Stat(named)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("data folder %s does not exist", named)
			}
			return "", err
		}
		if !st.IsDir() {
			return "", fmt.Errorf("data folder %s is not a folder", named)
		}
		return named, nil
	}
	dir, err := defaultDataDir(scale, false)
	if err != nil {
		return "", err
	}
	if err := ensureTPCDS(ctx, dir, scale, stderr); err != nil {
		return "", err
	}
	return dir, nil
}

// ensureTPCDS writes the TPC-DS data set of the scale into dir unless it
// is already there. It writes into a sibling folder and renames it into
// place at the end, so an interrupted run never leaves a half data set
// that a later run would take for a whole one.
func ensureTPCDS(ctx context.Context, dir string, scale float64, stderr io.Writer) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".partial-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // a no-op after the rename
	fmt.Fprintf(stderr, "fsql: generating TPC-DS scale %s data in %s (first use only)\n",
		strconv.FormatFloat(scale, 'f', -1, 64), dir)
	if err := generateTPCDS(ctx, tmp, scale, stderr); err != nil {
		return fmt.Errorf("generating TPC-DS data: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr == nil {
			return nil // another fsql finished the same data set first
		}
		return err
	}
	return nil
}
