package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// doorKeepers are the packages that may call store's WriteCards, the only
// writer of cards, their links and their contests: the one door for
// authority, and the benchmark generator (synthetic palaces, each card a
// person's direct write).
var doorKeepers = map[string]bool{
	"host/authority": true,
	"benchgen":       true,
}

// cardWrite matches SQL that writes a table holding a card's authority.
var cardWrite = regexp.MustCompile(`(?i)\b(INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM)\s+(cards|card_links|card_contests|card_events)\b`)

// TestOneDoorForAuthority holds every change to a card to the one door:
// no package but the door calls WriteCards, and store exports no other
// method that writes the card tables (directly or through its unexported
// writers).
func TestOneDoorForAuthority(t *testing.T) {
	root := moduleRoot(t)
	var calls int
	walkGo(t, root, func(pkg, path string, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "WriteCards" || pkg == "store" {
				return true
			}
			calls++
			if !doorKeepers[pkg] {
				t.Errorf("%s calls WriteCards: a change to a card goes through host/authority (the one door for authority)", path)
			}
			return true
		})
	})
	if calls == 0 {
		t.Fatal("found no call of WriteCards: the test no longer sees the door")
	}

	// store's exported methods of Tx: only WriteCards may reach the card
	// tables' writers.
	writers := map[string]bool{}
	var methods []*ast.FuncDecl
	walkGo(t, root, func(pkg, _ string, f *ast.File) {
		if pkg != "store" {
			return
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Body == nil {
				continue
			}
			methods = append(methods, fd)
			if !fd.Name.IsExported() && writesCardTables(fd) {
				writers[fd.Name.Name] = true
			}
		}
	})
	if len(writers) < 5 {
		t.Fatalf("found %d unexported card writers in store (%v), want insertCard, setCardStatus, insertLink, insertContest, appendEvent…", len(writers), writers)
	}
	for _, fd := range methods {
		if !fd.Name.IsExported() || fd.Name.Name == "WriteCards" {
			continue
		}
		if writesCardTables(fd) || callsAny(fd, writers) {
			t.Errorf("store exports %s, which writes a card table: only WriteCards may, so every write carries its decision", fd.Name.Name)
		}
	}
}

// writesCardTables reports whether fd's body holds SQL writing a card
// table.
func writesCardTables(fd *ast.FuncDecl) bool {
	found := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && cardWrite.MatchString(lit.Value) {
			found = true
		}
		return !found
	})
	return found
}

// callsAny reports whether fd's body calls a method named in names.
func callsAny(fd *ast.FuncDecl, names map[string]bool) bool {
	found := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && names[sel.Sel.Name] {
			found = true
		}
		return !found
	})
	return found
}

// walkGo parses every non-test Go file of the module (examples aside:
// they are modules of their own) and calls fn with its package directory
// relative to root.
func walkGo(t *testing.T, root string, fn func(pkg, path string, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "examples") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		fn(filepath.ToSlash(rel), path, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
