package plugins

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tetratelabs/wazero"
)

// The disk cache is wazero's compilation cache, one directory per module:
//
//	<cacheDir>/<version>/<sha256 of the module>/wazero-<v>-<arch>-<os>/<key>
//	<cacheDir>/<version>/<sha256 of the module>/SHA256SUMS
//
// wazero checks a CRC over the machine code of an entry but not the function
// offsets or lengths around it, and a corrupt entry makes compilation fail
// rather than fall back. So palace seals each directory with SHA256SUMS after
// a successful compile and trusts only a directory whose every file matches:
// anything else (bit rot, truncation, a crash mid-write, a stray file) is
// deleted and rebuilt. One directory per module keeps that deletion from
// touching any other module's entry.

const sumsFile = "SHA256SUMS"

// diskCache is the cache directory of one module.
type diskCache struct {
	dir  string
	warm bool // the directory held a sealed, intact entry before this load
}

// openDiskCache returns the module's cache directory, deleting it first if
// its contents do not match their seal.
func openDiskCache(base, version, hash string) diskCache {
	dir := filepath.Join(base, version, hash)
	if verifySums(dir) {
		return diskCache{dir: dir, warm: true}
	}
	// Untrusted or absent: start empty. An error here surfaces when wazero
	// tries to use the directory, and Load then compiles without it.
	_ = os.RemoveAll(dir)
	return diskCache{dir: dir}
}

// compilationCache opens wazero's cache on the directory.
func (d diskCache) compilationCache() (wazero.CompilationCache, error) {
	return wazero.NewCompilationCacheWithDir(d.dir)
}

// discard deletes the directory; used when compiling through it failed.
func (d diskCache) discard() { _ = os.RemoveAll(d.dir) }

// seal writes SHA256SUMS for the files wazero wrote. Best effort: a cache that
// cannot be sealed is simply rebuilt next time.
func (d diskCache) seal() {
	sums, err := sumDir(d.dir)
	if err != nil || len(sums) == 0 {
		return
	}
	var buf bytes.Buffer
	for _, s := range sums {
		fmt.Fprintf(&buf, "%s  %s\n", s.sum, s.path)
	}
	tmp, err := os.CreateTemp(d.dir, sumsFile+".*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(buf.Bytes())
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), filepath.Join(d.dir, sumsFile)) != nil {
		_ = os.Remove(tmp.Name())
	}
}

type fileSum struct{ path, sum string }

// sumDir hashes every regular file under dir except the seal, in lexical
// order, with slash-separated relative paths.
func sumDir(dir string) ([]fileSum, error) {
	var sums []fileSum
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == sumsFile {
			return nil
		}
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", rel)
		}
		sum, err := hashFile(path)
		if err != nil {
			return err
		}
		sums = append(sums, fileSum{rel, sum})
		return nil
	})
	return sums, err
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// verifySums reports whether dir holds exactly the files its seal lists, each
// with the listed hash.
func verifySums(dir string) bool {
	raw, err := os.ReadFile(filepath.Join(dir, sumsFile))
	if err != nil {
		return false
	}
	want := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		sum, path, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 || path == "" {
			return false
		}
		want[path] = sum
	}
	if len(want) == 0 {
		return false
	}
	got, err := sumDir(dir)
	if err != nil || len(got) != len(want) {
		return false
	}
	for _, s := range got {
		if want[s.path] != s.sum {
			return false
		}
	}
	return true
}
