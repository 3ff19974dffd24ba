package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/ssnmf/ssnmf/synth"
)

// The documents whose commands TestDocCommands checks, relative to the
// repository root: the README and every page of the guide.
const (
	docReadme   = "README.md"
	docGuideDir = "docs/guide"
)

// docMaxRows bounds the rows that a documented gen writes, and is the size
// of the data generated for an input that no earlier command wrote: the
// commands run as written, on data small enough for the tests.
const docMaxRows = 1000

// docLine is a line of a code block of a document.
type docLine struct {
	file string // relative to the repository root
	line int    // 1-based
	text string
	// block counts the code blocks of the file, so that the lines of one
	// block share it.
	block int
}

func (l docLine) String() string {
	return fmt.Sprintf("%s:%d: %s", l.file, l.line, strings.TrimSpace(l.text))
}

// codeLines returns the lines of the code blocks of the Markdown file
// root/name: fenced (```) blocks, and blocks indented by four spaces or a
// tab after a blank line.
func codeLines(t *testing.T, root, name string) []docLine {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	var lines []docLine
	fenced, indented, blank, block := false, false, true, 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		trimmed := strings.TrimSpace(text)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			if fenced = !fenced; fenced {
				block++
			}
		case fenced:
			lines = append(lines, docLine{name, n, text, block})
		case trimmed == "":
			// A blank line neither ends nor starts an indented block.
		case strings.HasPrefix(text, "    ") || strings.HasPrefix(text, "\t"):
			if !indented && blank {
				indented = true
				block++
			}
			if indented {
				lines = append(lines, docLine{name, n, text, block})
			}
		default:
			indented = false
		}
		blank = trimmed == ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// envRE matches an environment setting before a command, as in
// "GOEXPERIMENT=simd go build".
var envRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// docCommand is an ssnmf command line of a document.
type docCommand struct {
	docLine
	args []string // after "ssnmf"
}

// commandArgs returns the arguments after "ssnmf" of a documented command
// line, or nil if the line is not an ssnmf command. It drops a prompt
// ("$ "), environment settings, "/usr/bin/time -v", "scripts/memlimit/run.sh
// LIMIT" and "go run ./cmd/ssnmf" before the command, and a comment, a pipe
// or a redirection after it.
func commandArgs(text string) []string {
	words := strings.Fields(text)
prefixes:
	for len(words) > 0 {
		w := words[0]
		switch {
		case w == "$":
			words = words[1:]
		case envRE.MatchString(w):
			words = words[1:]
		case w == "/usr/bin/time" && len(words) > 1 && words[1] == "-v":
			words = words[2:]
		case w == "scripts/memlimit/run.sh" && len(words) > 1:
			words = words[2:]
		case w == "go" && len(words) > 2 && words[1] == "run" && words[2] == "./cmd/ssnmf":
			words = append([]string{"ssnmf"}, words[3:]...)
		default:
			break prefixes
		}
	}
	if len(words) < 2 || filepath.Base(words[0]) != "ssnmf" ||
		!slices.ContainsFunc(commands, func(c subcommand) bool { return c.name == words[1] }) {
		return nil
	}
	args := words[1:]
	for i, w := range args {
		if strings.HasPrefix(w, "#") || w == "|" || w == "&&" || w == ";" || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") {
			return args[:i]
		}
	}
	return args
}

// docRepoPaths returns the paths in the repository that a documented
// command line names and that must exist: a script it runs
// ("scripts/...") or a package it runs, builds or tests ("go run ./x").
func docRepoPaths(text string) []string {
	words := strings.Fields(text)
	for len(words) > 0 && (words[0] == "$" || words[0] == "bash" || envRE.MatchString(words[0])) {
		words = words[1:]
	}
	if len(words) == 0 {
		return nil
	}
	if strings.HasPrefix(words[0], "scripts/") {
		return []string{words[0]}
	}
	if words[0] != "go" || len(words) < 2 || !slices.Contains([]string{"run", "test", "build"}, words[1]) {
		return nil
	}
	var paths []string
	for _, w := range words[2:] {
		if p, ok := strings.CutPrefix(w, "./"); ok && p != "..." {
			paths = append(paths, strings.TrimSuffix(p, "/..."))
		}
	}
	return paths
}

// docCheckOnly reports whether a documented command is only parsed and
// checked, not run: it needs a Slurm allocation or a coordinator's run
// directory, or it is a timing run (bench, unless -quick).
func docCheckOnly(args []string) bool {
	if args[0] == "worker" || args[0] == "bench" && !slices.Contains(args, "-quick") {
		return true
	}
	for i, a := range args {
		if a == "-engine=slurm" || a == "-engine" && i+1 < len(args) && args[i+1] == "slurm" {
			return true
		}
	}
	return false
}

// flagValue returns the value of the flag -name in args, and its index.
func flagValue(args []string, name string) (string, int) {
	for i, a := range args {
		if (a == "-"+name || a == "--"+name) && i+1 < len(args) {
			return args[i+1], i + 1
		}
		if v, ok := strings.CutPrefix(a, "-"+name+"="); ok {
			return v, i
		}
	}
	return "", -1
}

// docInputs returns the positional arguments of the command args, the
// files it reads. Its flags take a value unless they are boolean. (A file
// that a flag names, such as an -affinity edge list, is not generated: an
// earlier command of the page must write it.)
func docInputs(args []string) []string {
	bools := map[string]bool{"-q": true, "-standardize": true, "-linear": true, "-quick": true}
	var in []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "-") && a != "-" && !strings.Contains(a, "=") && !bools[a]:
			i++ // the flag's value
		case !strings.HasPrefix(a, "-"):
			in = append(in, a)
		}
	}
	return in
}

// TestDocCommands checks every ssnmf command in a code block of the README
// and of the guide (docs/guide), so that none goes stale. The commands of a
// document run in order in one temporary directory, in-process: solve,
// gen, graph, tiles, plot and dump for real (gen writes at most docMaxRows
// rows, and a table no earlier command wrote is generated first), the rest
// (-engine slurm, worker, bench) only parsed and checked (withCheckOnly).
// It also compares the README's worked example's output, numbers aside,
// with what that command prints now, and checks that the scripts and
// packages the documents run exist. docs/guide/README.md describes this.
func TestDocCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every documented command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{docReadme}
	pages, err := filepath.Glob(filepath.Join(root, docGuideDir, "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in %s: %v", docGuideDir, err)
	}
	for _, p := range pages {
		docs = append(docs, filepath.Join(docGuideDir, filepath.Base(p)))
	}
	total := 0
	for _, doc := range docs {
		t.Run(doc, func(t *testing.T) {
			lines := codeLines(t, root, doc)
			total += runDocCommands(t, root, lines)
		})
	}
	if total < 20 {
		t.Errorf("only %d documented commands found; is the extraction broken?", total)
	}
}

// docRun is what a documented command printed.
type docRun struct {
	docCommand
	stdout, stderr string
}

// runDocCommands runs the commands among lines in order in a new
// temporary directory and returns how many it ran or checked.
func runDocCommands(t *testing.T, root string, lines []docLine) int {
	dir := t.TempDir()
	t.Chdir(dir)
	var runs []docRun
	count := 0
	for _, l := range lines {
		for _, p := range docRepoPaths(l.text) {
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("%v: names %s, which is not in the repository", l, p)
			}
		}
		args := commandArgs(l.text)
		if args == nil {
			continue
		}
		count++
		c := docCommand{l, slices.Clone(args)}
		if docCheckOnly(args) {
			t.Setenv("SLURM_JOB_ID", "doc")
			t.Setenv("SLURM_NTASKS", "2")
			var out, errb bytes.Buffer
			if code := run(withCheckOnly(context.Background()), args, &out, &errb); code != exitOK {
				t.Errorf("%v: checked (not run): exit %d: %s", l, code, errb.String())
			}
			t.Logf("checked: %v", l)
			continue
		}
		if args[0] == "gen" {
			if v, i := flagValue(args, "n"); i >= 0 {
				if n, err := strconv.Atoi(v); err == nil && n > docMaxRows {
					args[i] = strconv.Itoa(docMaxRows)
				}
			}
		}
		for _, in := range docInputs(args) {
			if _, err := os.Stat(in); err == nil || synth.Format(in) == "" || args[0] == "dump" || args[0] == "plot" {
				continue
			}
			gen := []string{"gen", "-q", "-n", strconv.Itoa(docMaxRows), "-p", "8", "-k", "10", "-seed", "1", "-o", in}
			if code, _, stderr := ssnmf(t, gen...); code != exitOK {
				t.Fatalf("%v: generating its input %s: %s", l, in, stderr)
			}
		}
		code, stdout, stderr := ssnmf(t, args...)
		if code != exitOK {
			t.Errorf("%v: ran as ssnmf %s: exit %d: %s", l, strings.Join(args, " "), code, stderr)
			continue
		}
		t.Logf("ran: %v", l)
		runs = append(runs, docRun{c, stdout, stderr})
	}
	if lines != nil && lines[0].file == docReadme {
		checkWorkedExample(t, lines, runs)
	}
	return count
}

// numberRE matches a number as the command prints it.
var numberRE = regexp.MustCompile(`[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?`)

// sizeRE matches a byte count as diskio.Size formats it, its number masked.
var sizeRE = regexp.MustCompile(`# [kMGTPE]?B\b`)

// shape returns a line of output with its numbers, work directory and
// runs of spaces masked: what stays the same from run to run and build to
// build.
func shape(line string) string {
	line = regexp.MustCompile(`workdir=\S+`).ReplaceAllString(line, "workdir=DIR")
	// The memory budget is this machine's, or its cgroup's.
	line = regexp.MustCompile(`^(\s*ssnmf: )(no )?memory budget.*`).ReplaceAllString(line, "${1}memory budget BUDGET")
	// The kNN screen's kernel is this CPU's.
	line = regexp.MustCompile(`knn-kernel=\S+`).ReplaceAllString(line, "knn-kernel=KERNEL")
	line = numberRE.ReplaceAllString(line, "#")
	// Storage I/O depends on the file system and the page cache.
	line = sizeRE.ReplaceAllString(line, "# B")
	return strings.Join(strings.Fields(line), " ")
}

// shapes returns the distinct shapes of the lines of text.
func shapes(lines []string) []string {
	var s []string
	for _, l := range lines {
		if l = shape(l); l != "" && !slices.Contains(s, l) {
			s = append(s, l)
		}
	}
	slices.Sort(s)
	return s
}

// checkWorkedExample compares the README's worked example's progress lines
// (the code block that begins with the memory budget or "ssnmf: yeast.csv
// (built in):") and result
// table (the block that begins "input") with what the last solve before
// them printed: the same lines, numbers aside.
func checkWorkedExample(t *testing.T, lines []docLine, runs []docRun) {
	blocks := map[int][]docLine{}
	for _, l := range lines {
		blocks[l.block] = append(blocks[l.block], l)
	}
	found := 0
	for b := 1; b <= len(blocks); b++ {
		bl := blocks[b]
		if len(bl) == 0 {
			continue
		}
		first := strings.TrimSpace(bl[0].text)
		stderr := strings.HasPrefix(first, "ssnmf: yeast.csv (built in):") || strings.HasPrefix(first, "ssnmf: spectral embedding:") ||
			shape(first) == "ssnmf: memory budget BUDGET"
		if !stderr && !strings.HasPrefix(first, "input ") {
			continue
		}
		found++
		var solve *docRun
		for i := range runs {
			if runs[i].line < bl[0].line && runs[i].args[0] == "solve" {
				solve = &runs[i]
			}
		}
		if solve == nil {
			t.Errorf("%v: no solve ran before this output", bl[0])
			continue
		}
		var want []string
		for _, l := range bl {
			want = append(want, l.text)
		}
		got := solve.stdout
		if stderr {
			got = solve.stderr
		}
		gotLines := strings.Split(strings.TrimRight(got, "\n"), "\n")
		if stderr {
			// Progress lines come at most once a second: compare the
			// kinds of line, not their number.
			if w, g := shapes(want), shapes(gotLines); !slices.Equal(w, g) {
				t.Errorf("%v: the progress lines shown are not what %q prints now (numbers aside):\nshown:\n\t%s\nprinted:\n\t%s",
					bl[0], strings.Join(solve.args, " "), strings.Join(w, "\n\t"), strings.Join(g, "\n\t"))
			}
			continue
		}
		var w, g []string
		for _, l := range want {
			w = append(w, shape(l))
		}
		for _, l := range gotLines {
			g = append(g, shape(l))
		}
		if !slices.Equal(w, g) {
			t.Errorf("%v: the result table shown is not what %q prints now (numbers aside):\nshown:\n\t%s\nprinted:\n\t%s",
				bl[0], strings.Join(solve.args, " "), strings.Join(w, "\n\t"), strings.Join(g, "\n\t"))
		}
	}
	if found != 2 {
		t.Errorf("found %d of the worked example's 2 output blocks in %s", found, docReadme)
	}
}

// docMarkdown returns the Markdown files of the documentation, relative to
// the repository root: the README, docs/*.md and the guide's pages.
func docMarkdown(t *testing.T, root string) []string {
	t.Helper()
	files := []string{docReadme}
	for _, pat := range []string{"docs/*.md", docGuideDir + "/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, rel)
		}
	}
	return files
}

// mentionRE matches an ssnmf command in running text or a code block: the
// command's name and what follows it up to the end of the code span or
// line.
var mentionRE = regexp.MustCompile("ssnmf ([a-z]+)((?: [^`\n]*)?)")

// mentionFlagRE matches a flag in a mentioned command: a dash after a
// space or bracket, then the name.
var mentionFlagRE = regexp.MustCompile(`(?:^|[\s\[])-([a-z][a-z0-9-]*)`)

// TestDocFlagNames checks that every flag written after an ssnmf command
// anywhere in the documentation, in code blocks or in running text (such
// as "ssnmf solve -method kmeans -k 10", or a fragment such as "ssnmf
// solve -trace"), is a flag of that command: commands in prose are not
// run, but a renamed flag must not survive in them.
func TestDocFlagNames(t *testing.T) {
	root := "../.."
	flags := map[string][]string{}
	for _, c := range commands {
		flags[c.name] = commandFlags(t, c.name)
	}
	for _, f := range docMarkdown(t, root) {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mentionRE.FindAllStringSubmatch(string(b), -1) {
			known, ok := flags[m[1]]
			if !ok {
				continue // "ssnmf clusters", a word in a sentence
			}
			for _, fm := range mentionFlagRE.FindAllStringSubmatch(m[2], -1) {
				if !slices.Contains(known, fm[1]) {
					t.Errorf("%s: \"ssnmf %s%s\": ssnmf %s has no flag -%s", f, m[1], m[2], m[1], fm[1])
				}
			}
		}
	}
}

// TestDocFlags checks that every flag of every command has a row in the
// command's table in docs/guide/usage-and-flags.md (a row whose first cell
// begins with the flag), and that every row names a flag the command has.
func TestDocFlags(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("../..", docGuideDir, "usage-and-flags.md"))
	if err != nil {
		t.Fatal(err)
	}
	// rows[command] are the flags of the rows of the command's sections.
	rows := map[string][]string{}
	section := ""
	rowRE := regexp.MustCompile("^\\| `-([a-z][a-z0-9-]*)")
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "## `ssnmf "); ok {
			section, _, _ = strings.Cut(rest, " ")
			section = strings.TrimSuffix(section, "`")
		} else if strings.HasPrefix(line, "## ") {
			section = ""
		}
		if m := rowRE.FindStringSubmatch(line); m != nil && section != "" {
			rows[section] = append(rows[section], m[1])
		}
	}
	for _, c := range commands {
		flags := commandFlags(t, c.name)
		documented := rows[c.name]
		if len(documented) == 0 {
			t.Errorf("usage-and-flags.md has no section \"## `ssnmf %s ...`\" with a flag table", c.name)
			continue
		}
		for _, f := range flags {
			if !slices.Contains(documented, f) {
				t.Errorf("ssnmf %s -%s has no row in its table in %s/usage-and-flags.md", c.name, f, docGuideDir)
			}
		}
		for _, f := range documented {
			if !slices.Contains(flags, f) {
				t.Errorf("%s/usage-and-flags.md documents ssnmf %s -%s, which the command does not have", docGuideDir, c.name, f)
			}
		}
	}
}

// linkRE matches a Markdown link's target.
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// slug returns the anchor that GitHub gives a heading.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ' || r == '-':
			b.WriteRune('-')
		case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// studyMarkdown returns the Markdown files of the studies (studies/README.md
// and every study's files), relative to the repository root. Their links
// are checked with the documentation's; their commands and flags are not,
// since they record runs of earlier builds.
func studyMarkdown(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join(root, "studies"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".md" {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files = append(files, rel)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no Markdown files under studies")
	}
	return files
}

// TestDocLinks checks that every relative link of the README, of the
// Markdown files under docs and of those under studies names a file of
// the repository, and an anchor, if it has one, that a heading of that
// file makes.
func TestDocLinks(t *testing.T) {
	root := "../.."
	files := append(docMarkdown(t, root), studyMarkdown(t, root)...)
	anchors := func(path string) []string {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		var a []string
		seen := map[string]int{} // GitHub suffixes a repeated anchor with -1, -2, ...
		for line := range strings.SplitSeq(string(b), "\n") {
			if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
				s := slug(h)
				if n := seen[s]; n > 0 {
					a = append(a, fmt.Sprintf("%s-%d", s, n))
				} else {
					a = append(a, s)
				}
				seen[s]++
			}
		}
		return a
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			full := filepath.Join(root, filepath.Dir(f), path)
			if path == "" {
				full = filepath.Join(root, f)
			}
			if _, err := os.Stat(full); err != nil {
				t.Errorf("%s: link %s: no such file", f, target)
				continue
			}
			if anchor != "" && !slices.Contains(anchors(full), anchor) {
				t.Errorf("%s: link %s: no heading makes the anchor #%s", f, target, anchor)
			}
		}
	}
}
