package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// runnableBlock is a fenced block the docs mark to be run: ```sh runnable.
var runnableBlock = regexp.MustCompile("(?ms)^```sh runnable\n(.*?)^```")

// TestRunnableDocBlocks runs every command block of README.md and
// docs/*.md marked ```sh runnable with the real binary, in order, in a
// fresh git checkout and palace home per file (with the repository's
// examples/ beside it, which the blocks may copy from). A block passes when
// bash runs it to the end with -e and -o pipefail.
func TestRunnableDocBlocks(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	total := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		blocks := runnableBlock.FindAllStringSubmatch(string(b), -1)
		if len(blocks) == 0 {
			continue
		}
		rel, _ := filepath.Rel(root, f)
		t.Run(rel, func(t *testing.T) {
			e := newEnv(t)
			if out, err := exec.Command("cp", "-R", filepath.Join(root, "examples"), e.dir).CombinedOutput(); err != nil {
				t.Fatalf("copy examples: %v\n%s", err, out)
			}
			for i, m := range blocks {
				total++
				cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", m[1])
				cmd.Dir = e.dir
				cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home, "USER=tester", "NO_COLOR=1",
					"PATH="+filepath.Dir(palaceBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
				out, err := cmd.CombinedOutput()
				t.Logf("%s, block %d:\n%s", rel, i+1, out)
				if err != nil {
					t.Errorf("%s, runnable block %d failed: %v\n--- block\n%s--- output\n%s", rel, i+1, err, m[1], out)
				}
			}
		})
	}
	if total < 3 {
		t.Errorf("found %d runnable blocks in README.md and docs/*.md, want the marked ones (```sh runnable)", total)
	}
}
