//go:build fsqlgen

// The build tag keeps cmd/fsql building while gen.go (runGen) is not yet
// in the repository; remove it once gen.go is committed.

package main

func init() { genCommand = runGen }
