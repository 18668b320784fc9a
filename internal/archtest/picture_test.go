package archtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pictureMarker opens the package picture in docs/architecture.md: the
// fenced block after it lists every package of the module, one a line,
// each with the packages of palace's it imports ("pkg → a, b"), top layer
// first. Lines that start with "#" name a layer.
const pictureMarker = "<!-- package picture: internal/archtest checks it against go list -->"

// TestPictureMatchesGoList is the allowlist of package-to-package edges:
// the picture in docs/architecture.md must list every package `go list`
// finds, draw every import between them (test files aside) and nothing
// else, and every arrow must point down the list. A new import fails here
// until it is drawn, and an upward one cannot be drawn: the package it
// points to would have to move above the importer, which every other
// arrow into it then contradicts.
func TestPictureMatchesGoList(t *testing.T) {
	root := moduleRoot(t)
	order, drawn := readPicture(t, filepath.Join(root, "docs", "architecture.md"))
	for _, problem := range checkPicture(order, drawn, goListEdges(t, root)) {
		t.Error(problem)
	}
}

// checkPicture compares a picture (packages in order, imports drawn) with
// the imports the packages have, and names each difference and each
// upward arrow with its fix.
func checkPicture(order []string, drawn, actual map[string][]string) []string {
	var problems []string
	report := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	rank := map[string]int{}
	for i, p := range order {
		if _, dup := rank[p]; dup {
			report("the picture lists %s twice: list each package once", p)
		}
		rank[p] = i
	}
	for _, p := range sortedKeys(actual) {
		if _, ok := rank[p]; !ok {
			report("package %s is missing from the picture in docs/architecture.md: add it below what imports it and above what it imports", p)
		}
	}
	for _, p := range order {
		if _, ok := actual[p]; !ok {
			report("the picture lists %s, which go list does not find: remove it", p)
		}
	}
	for _, p := range sortedKeys(actual) {
		for _, imp := range actual[p] {
			if !slices.Contains(drawn[p], imp) {
				report("%s imports %s, which the picture does not draw: draw `%s → %s` in docs/architecture.md if the import belongs, or remove it", p, imp, p, imp)
			}
			if ri, ok := rank[imp]; ok && ri <= rank[p] {
				report("%s imports %s, which sits above it in the picture: an upward import; move the shared code down instead", p, imp)
			}
		}
	}
	for _, p := range order {
		for _, imp := range drawn[p] {
			if !slices.Contains(actual[p], imp) {
				report("the picture draws %s → %s, but %s does not import it: remove the arrow", p, imp, p)
			}
		}
	}
	return problems
}

// readPicture returns the packages of the picture in order and the
// imports drawn for each.
func readPicture(t *testing.T, path string) ([]string, map[string][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	var order []string
	drawn := map[string][]string{}
	state := 0 // 0 before the marker, 1 before the fence, 2 inside
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case state == 0 && line == pictureMarker:
			state = 1
		case state == 1 && strings.HasPrefix(line, "```"):
			state = 2
		case state == 2 && strings.HasPrefix(line, "```"):
			return order, drawn
		case state == 2 && line != "" && !strings.HasPrefix(line, "#"):
			pkg, deps, _ := strings.Cut(line, "→")
			pkg = strings.TrimSpace(pkg)
			order = append(order, pkg)
			for d := range strings.SplitSeq(deps, ",") {
				if d = strings.TrimSpace(d); d != "" {
					drawn[pkg] = append(drawn[pkg], d)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	t.Fatalf("%s has no package picture: a fenced block after %q", path, pictureMarker)
	return nil, nil
}

// goListEdges runs `go list` over the module and returns, for each package
// (relative to the module), the packages of palace's it imports.
func goListEdges(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	edges := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := rel(fields[0])
		edges[pkg] = []string{}
		for _, imp := range fields[1:] {
			if within(imp, module) {
				edges[pkg] = append(edges[pkg], rel(imp))
			}
		}
	}
	if len(edges) < 20 {
		t.Fatalf("go list found %d packages: %s", len(edges), out)
	}
	return edges
}

func rel(imp string) string { return strings.TrimPrefix(strings.TrimPrefix(imp, module), "/") }

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestPictureCheckFindsUpwardAndMissingImports guards the test above
// against passing for want of reading: a picture that draws an import
// upward, misses one, or draws one that is not there is reported.
func TestPictureCheckFindsUpwardAndMissingImports(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.md")
	pic := fmt.Sprintf("%s\n```text\n# top\nhost → store, domain\nstore → host\n# bottom\ndomain\n```\n", pictureMarker)
	if err := os.WriteFile(path, []byte(pic), 0o644); err != nil {
		t.Fatal(err)
	}
	order, drawn := readPicture(t, path)
	actual := map[string][]string{"host": {"store"}, "store": {"host", "domain"}, "domain": {}}
	got := strings.Join(checkPicture(order, drawn, actual), "\n")
	for _, want := range []string{
		"store imports host, which sits above it in the picture",
		"store imports domain, which the picture does not draw",
		"the picture draws host → domain, but host does not import it",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q miss %q", got, want)
		}
	}
	if n := len(checkPicture(order, drawn, map[string][]string{"host": {"store", "domain"}, "store": {"host"}, "domain": {}})); n != 1 {
		t.Errorf("a picture that only draws one upward arrow gives %d problems, want 1", n)
	}
}
