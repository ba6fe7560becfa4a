package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is the release fsql was built as, set by the release build
// (-ldflags "-X main.version=v1.2.3"); empty in a development build,
// which reports its module version or VCS revision instead.
var version = ""

// printVersion prints one line: the version, the commit when the build
// recorded one, and the Go toolchain and platform.
func printVersion(w io.Writer) {
	v, rev, modified := version, "", false
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified {
			rev += "+dirty"
		}
		v += " " + rev
	}
	fmt.Fprintf(w, "fsql %s (%s %s/%s)\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
