package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/internal/format"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program minus the exit, so tests can call it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var err error
	switch {
	case len(args) > 0 && args[0] == "gen":
		err = runGen(args[1:], stdout, stderr)
	case len(args) > 1 && args[0] == "bench" && args[1] == "dpp":
		err = runBenchDPP(args[2:], stdout, stderr)
	case len(args) > 0 && args[0] == "bench":
		err = runBench(args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "slt":
		err = runSLT(args[1:], stdout, stderr)
	case len(args) > 1 && args[0] == "help" && (args[1] == "gen" || args[1] == "bench" || args[1] == "slt"):
		// fsql help gen, fsql help bench dpp: the sub-command's help.
		return run(append(args[1:], "-h"), stdin, stdout, stderr)
	case len(args) > 1 && args[0] == "help":
		err = fmt.Errorf("no command %q: fsql help lists them", args[1])
	case len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
		usage(stdout)
		return 0
	default:
		err = runQuery(args, stdin, stdout, stderr)
	}
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "fsql: %s\n", message(err))
	if errors.Is(err, context.Canceled) {
		return exitInterrupted
	}
	return 1
}

// exitInterrupted is the exit code after Ctrl-C (SIGINT), as shells
// report a process killed by SIGINT: 128 + 2.
const exitInterrupted = 130

// interruptContext is cancelled by the first SIGINT, which every stage of
// a query observes (parsing, planning, running) so fsql exits at once with
// exitInterrupted. After that first signal the default action is back: a
// second Ctrl-C kills the process even if something does not stop.
func interruptContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	context.AfterFunc(ctx, stop)
	return ctx, stop
}

// message is the one line printed for an error. An error of the engine
// starts with its MySQL number, SQLSTATE and kind, as the mysql client
// prints them, then the message, which says where (the script's file and
// statement, the line and column in the statement) and what:
//
//	ERROR 1064 (42000) Syntax: q.sql:3: statement 2: syntax error at line 1 column 10 near "frm"
//
// A mistake on the command line is its message alone, and a cancelled
// query needs no stack of wrappers to explain itself.
func message(err error) string {
	if errors.Is(err, context.Canceled) {
		return "cancelled"
	}
	msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " ")
	if k := fsql.KindOf(err); k != 0 {
		code, state := fsql.CodeOf(err)
		return fmt.Sprintf("ERROR %d (%s) %s: %s", code, state, k.String(), msg)
	}
	return msg
}

func usage(w io.Writer) {
	fmt.Fprint(w, `fsql: SQL over Hive-partitioned Parquet tables

usage:
  fsql [flags] -e "SQL; SQL ..."   run statements, print each result
  fsql [flags] -f FILE             run the ;-separated statements of FILE
  fsql [flags]                     interactive prompt (end statements with ;,
                                   .help lists its commands, \q quits)
  fsql gen tpcds [flags]           write a TPC-DS data set (fsql gen tpcds -h)
  fsql bench tpcds [flags]         time TPC-DS queries (fsql bench tpcds -h)
  fsql bench dpp [flags]           dynamic pruning on vs off (fsql bench dpp -h)
  fsql slt [flags] FILE...         run sqllogictest scripts (fsql slt -h)
  fsql help [COMMAND]              this text, or a command's (fsql help gen)

flags:
  --data DIR            data folder, one sub-folder per table
                        (default: a scale-0.01 TPC-DS set in the user cache
                        folder, generated on first use)
  --set KEY=VALUE       engine setting, repeatable (keys below)
  --format FORMAT       table (default), csv or json (JSON Lines)
  --max-rows N          table output of a longer result shows its first and
                        last N/2 rows and the count; 0 shows every row
                        (default 40 on a terminal, else 0)
  --crlf                end CSV lines with \r\n instead of \n
  --version             print the version and exit

EXPLAIN [ANALYZE] SELECT ... prints the plan as text. SHOW TABLES,
DESCRIBE t, SHOW CREATE TABLE t and SHOW VARIABLES describe the data and
the settings.

settings: --set KEY=VALUE for the whole run, or in a statement
SET KEY = VALUE (until the end of the prompt or script; write a key with
'-' in backquotes: SET `+"`execution.memory.query-budget`"+` = '1gb'), and
SET KEY = DEFAULT. Each key with its default on this machine:
`)
	for _, st := range fsql.DefaultConfig().Settings() {
		v := st.Value
		if v == "" {
			v = "''" // as SET writes the empty value
		}
		fmt.Fprintf(w, "  %s = %s\n      %s\n", st.Key, v, st.Doc)
	}
}

// setFlags collects repeated --set key=value flags.
type setFlags []string

func (s *setFlags) String() string { return strings.Join(*s, ",") }

func (s *setFlags) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("want key=value, got %q", v)
	}
	*s = append(*s, v)
	return nil
}

// apply applies the settings to cfg in order.
func (s setFlags) apply(cfg *fsql.Config) error {
	for _, kv := range s {
		k, v, _ := strings.Cut(kv, "=")
		if err := cfg.Set(k, v); err != nil {
			return fmt.Errorf("--set %s: %w", kv, err)
		}
	}
	return nil
}

// parseFlags parses fs quietly and turns its complaint into one line.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer, help func(io.Writer)) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help(stdout)
			return err
		}
		return fmt.Errorf("%w (see fsql help)", err)
	}
	return nil
}

func runQuery(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fsql", flag.ContinueOnError)
	sqlText := fs.String("e", "", "statements to run")
	file := fs.String("f", "", "file of statements to run")
	data := fs.String("data", "", "data folder")
	formatName := fs.String("format", "table", "output format")
	maxRows := fs.Int("max-rows", -1, "table rows shown")
	crlf := fs.Bool("crlf", false, "CSV lines end with \\r\\n")
	showVersion := fs.Bool("version", false, "print the version")
	var sets setFlags
	fs.Var(&sets, "set", "key=value")
	if err := parseFlags(fs, args, stdout, usage); err != nil {
		return err
	}
	if *showVersion {
		printVersion(stdout)
		return nil
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see fsql help)", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given["e"] && given["f"] {
		return errors.New("give -e or -f, not both")
	}
	outFormat, err := format.Parse(*formatName)
	if err != nil {
		return err
	}
	if *maxRows < -1 {
		return fmt.Errorf("--max-rows must be 0 (every row) or more, got %d", *maxRows)
	}
	cfg := fsql.DefaultConfig()
	cfg.PathsOutsideData = true // the user's own shell: any file they can read is theirs to query
	if err := sets.apply(&cfg); err != nil {
		return err
	}

	script, source := *sqlText, ""
	if given["f"] {
		b, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		script, source = string(b), *file
	}
	ctx, stop := interruptContext()
	defer stop()
	var stmts []statement
	if given["e"] || given["f"] {
		// A syntax error needs no data: report it before a first run
		// spends time generating the default data set.
		if strings.TrimSpace(script) == "" || strings.Trim(script, "; \t\r\n") == "" {
			if source != "" {
				return fmt.Errorf("%s has no statement to run", source)
			}
			return errors.New("-e has no statement to run (run fsql without -e for the prompt)")
		}
		if stmts, err = splitScriptContext(ctx, script); err != nil {
			if source != "" && ctx.Err() == nil {
				return fmt.Errorf("%s: %w", source, err)
			}
			return err
		}
	}
	dir, err := dataDir(ctx, *data, defaultScale, stderr)
	if err != nil {
		return err
	}
	eng, err := fsql.Open(dir, cfg)
	if err != nil {
		return err
	}
	p := &printer{eng: eng, sess: eng.Session(), out: stdout, stderr: stderr, show: defaultShow(outFormat, *maxRows, *crlf, stdout, stderr)}
	if !given["e"] && !given["f"] {
		return runPrompt(ctx, stop, p, stdin, stdout, stderr)
	}
	return p.statements(ctx, stmts, source)
}
