package main

import (
	"fmt"
	"strings"

	"github.com/fsql-dev/fsql"
)

// applySettings applies comma-separated key=value lists (the --set flags of
// bench, bench-write and fuzz) to cfg in order, so a later list overrides an
// earlier one.
func applySettings(cfg *fsql.Config, lists ...string) error {
	for _, list := range lists {
		for _, kv := range strings.Split(list, ",") {
			if kv = strings.TrimSpace(kv); kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return fmt.Errorf("--set %q: want key=value", kv)
			}
			if err := cfg.Set(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}
