//go:build unix

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptStopsPlanning runs the real binary on a statement that
// takes seconds to plan, sends SIGINT while it is planning, and expects
// fsql to stop at once with exit code 130 and a one-line message.
func TestInterruptStopsPlanning(t *testing.T) {
	bin, _ := fsqlBinary(t)
	dir := t.TempDir()
	// A long OR of ANDs over a one-row derived table, referenced by 12
	// joins of a CTE: no data needed, seconds of binding and planning.
	var sb strings.Builder
	sb.WriteString("explain with c as (select k, v from (select 1 as k, 2 as v) t where ")
	for i := 0; i < 20000; i++ {
		if i > 0 {
			sb.WriteString(" or ")
		}
		fmt.Fprintf(&sb, "(k = %d and v > %d)", i, i)
	}
	sb.WriteString(") select count(*) from c c0")
	for i := 1; i < 12; i++ {
		fmt.Fprintf(&sb, " join c c%d on c%d.k = c0.k", i, i)
	}
	sb.WriteString(";\n")
	script := filepath.Join(dir, "slow.sql")
	if err := os.WriteFile(script, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "--data", data, "-f", script)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("fsql finished before the interrupt (%v): the statement is not slow enough to test it\n%s", err, stderr.String())
	case <-time.After(1500 * time.Millisecond):
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("fsql still runs 10 s after SIGINT\n%s", stderr.String())
	}
	took := time.Since(sent)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
		t.Fatalf("fsql ended with %v after SIGINT, want exit code %d\n%s", err, exitInterrupted, stderr.String())
	}
	if got := stderr.String(); got != "fsql: cancelled\n" {
		t.Errorf("stderr %q, want one line fsql: cancelled", got)
	}
	t.Logf("exited %v after SIGINT", took)
	if took > time.Second {
		t.Errorf("fsql took %v to stop after SIGINT", took)
	}
}
