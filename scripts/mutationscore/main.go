// Command mutationscore reads gremlins' JSON reports, leaves out the mutants
// listed as equivalent, prints the score per package, and fails when a
// package scores below the threshold.
//
//	go run ./scripts/mutationscore -equivalent scripts/mutation-equivalent.txt \
//	    -threshold 90 pkg/vllm=/tmp/vllm.json pkg/query=/tmp/query.json
//
// Score (gremlins' "test efficacy") = killed / (killed + lived): of the
// mutants some unit test runs, the share a test notices. Timed-out mutants
// count as killed (the tests noticed), not-viable ones (they do not
// compile) are left out. Mutant coverage = (killed + lived) / (killed +
// lived + not covered) says how much of the code the unit tier runs at all.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
)

type report struct {
	Files []struct {
		FileName  string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// tally is one package's count.
type tally struct {
	killed, lived, notCovered, timedOut, notViable, equivalent int
	survivors                                                  []string
}

func (t tally) score() float64 {
	return percent(t.killed+t.timedOut, t.killed+t.timedOut+t.lived)
}

func (t tally) coverage() float64 {
	n := t.killed + t.timedOut + t.lived
	return percent(n, n+t.notCovered)
}

func percent(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}

func main() {
	equivalent := flag.String("equivalent", "", "file listing equivalent mutants: pkg/x/file.go:line:column TYPE  reason")
	threshold := flag.Float64("threshold", 90, "lowest score (percent) a package may have")
	flag.Parse()
	eq, err := readEquivalent(*equivalent)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutationscore:", err)
		os.Exit(2)
	}
	ok, err := run(os.Stdout, flag.Args(), eq, *threshold)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutationscore:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func run(w io.Writer, args []string, eq map[string]bool, threshold float64) (bool, error) {
	ok := true
	fmt.Fprintln(w, "| package | killed | lived | equivalent | not covered | mutant coverage | score (killed) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	var survivors []string
	for _, a := range args {
		pkg, file, found := strings.Cut(a, "=")
		if !found {
			return false, fmt.Errorf("argument %q: want pkg/dir=report.json", a)
		}
		t, err := count(pkg, file, eq)
		if err != nil {
			return false, err
		}
		mark := ""
		if t.score() < threshold {
			ok, mark = false, fmt.Sprintf(" (below %g%%)", threshold)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %.1f%% | %.1f%%%s |\n", pkg, t.killed+t.timedOut, t.lived, t.equivalent, t.notCovered, t.coverage(), t.score(), mark)
		survivors = append(survivors, t.survivors...)
	}
	if len(survivors) > 0 {
		fmt.Fprintln(w, "\nSurviving mutants (kill them with a test, or list them as equivalent with the reason):")
		for _, s := range survivors {
			fmt.Fprintln(w, "  "+s)
		}
	}
	return ok, nil
}

func count(pkg, file string, eq map[string]bool) (tally, error) {
	var t tally
	b, err := os.ReadFile(file)
	if err != nil {
		return t, err
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		return t, fmt.Errorf("%s: %w", file, err)
	}
	for _, f := range r.Files {
		for _, m := range f.Mutations {
			id := fmt.Sprintf("%s:%d:%d %s", path.Join(pkg, path.Base(f.FileName)), m.Line, m.Column, m.Type)
			if eq[id] {
				t.equivalent++
				continue
			}
			switch m.Status {
			case "KILLED":
				t.killed++
			case "TIMED OUT":
				t.timedOut++
			case "NOT VIABLE":
				t.notViable++
			case "LIVED":
				t.lived++
				t.survivors = append(t.survivors, "LIVED "+id)
			case "NOT COVERED":
				t.notCovered++
			}
		}
	}
	sort.Strings(t.survivors)
	return t, nil
}

// readEquivalent reads "pkg/x/file.go:line:column TYPE  reason" lines;
// blank lines and lines starting with # are comments.
func readEquivalent(file string) (map[string]bool, error) {
	out := map[string]bool{}
	if file == "" {
		return out, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			return nil, fmt.Errorf("%s: %q: want position, mutant type and the reason it is equivalent", file, line)
		}
		out[fields[0]+" "+fields[1]] = true
	}
	return out, sc.Err()
}
