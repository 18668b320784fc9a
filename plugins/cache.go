package plugins

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// The disk cache is wazero's compilation cache, one directory per module:
//
//	<cacheDir>/<version>/<sha256 of the module>-<rewrite>/wazero-<v>-<arch>-<os>/<key>
//	<cacheDir>/<version>/<sha256 of the module>-<rewrite>/SEAL
//
// <rewrite> names palace's rewrite of a module (capped tables, deadline
// checks) and changes with it.
//
// A successful compile seals its directory, listing every file with its
// size and CRC-32C (against accidents, not attackers); a directory whose
// files do not match the seal exactly is deleted and rebuilt.

const (
	sealFile   = "SEAL"
	sealHeader = "palace compilation cache seal v1: crc32c size path"
	// rewrittenFile holds the rewritten module; its name carries the
	// rewrite's version.
	rewrittenFile = "module.interrupt-v1.wasm"
	// rewriteID is the <rewrite> of the layout above.
	rewriteID = "rw2"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// diskCache is the cache directory of one module.
type diskCache struct {
	dir         string
	sealed      bool // held a seal when opened; sealChecked says if it matches
	sealChecked <-chan bool
}

// openDiskCache returns the module's cache directory. A sealed entry is
// checked in the background while the caller compiles through it; anything
// else is deleted, to start empty.
func openDiskCache(base, version, hash string) diskCache {
	dir := filepath.Join(base, version, hash+"-"+rewriteID)
	if _, err := os.Lstat(filepath.Join(dir, sealFile)); err == nil {
		checked := make(chan bool, 1)
		go func() { checked <- verifySeal(dir) }()
		return diskCache{dir: dir, sealed: true, sealChecked: checked}
	}
	_ = os.RemoveAll(dir)
	return diskCache{dir: dir}
}

// intact waits for the seal check and reports whether the entry was sealed
// and matched its seal. Nothing compiled through an entry may run before
// intact returns true. It may be called once.
func (d diskCache) intact() bool {
	return d.sealed && <-d.sealChecked
}

// rewritten returns the rewritten module kept in a sealed entry (not yet
// known to be intact; see intact); ok is false when the entry is cold or
// holds none (the module could not be rewritten).
func (d diskCache) rewritten() (code []byte, ok bool) {
	if !d.sealed {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(d.dir, rewrittenFile))
	return b, err == nil
}

// keepRewritten stores the rewritten module before the entry is sealed.
func (d diskCache) keepRewritten(code []byte) {
	_ = os.WriteFile(filepath.Join(d.dir, rewrittenFile), code, 0o644)
}

// discard deletes the directory; used when compiling through it failed.
func (d diskCache) discard() { _ = os.RemoveAll(d.dir) }

// seal records the files wazero wrote; an unsealed entry is rebuilt.
func (d diskCache) seal() {
	sums, err := sumDir(d.dir)
	if err != nil || len(sums) == 0 {
		return
	}
	var buf bytes.Buffer
	buf.WriteString(sealHeader + "\n")
	for _, s := range sums {
		buf.WriteString(s.String() + "\n")
	}
	tmp, err := os.CreateTemp(d.dir, sealFile+".*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(buf.Bytes())
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), filepath.Join(d.dir, sealFile)) != nil {
		_ = os.Remove(tmp.Name())
	}
}

// fileSum is one line of a seal.
type fileSum struct {
	crc  uint32
	size int64
	path string // slash-separated, relative to the sealed directory
}

func (s fileSum) String() string { return fmt.Sprintf("%08x %d %s", s.crc, s.size, s.path) }

// sumDir checksums every regular file under dir except the seal, in lexical
// order.
func sumDir(dir string) ([]fileSum, error) {
	var sums []fileSum
	buf := make([]byte, 1<<20)
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
		if rel == sealFile {
			return nil
		}
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", rel)
		}
		s, err := checksum(path, buf)
		s.path = rel
		sums = append(sums, s)
		return err
	})
	return sums, err
}

func checksum(path string, buf []byte) (fileSum, error) {
	f, err := os.Open(path)
	if err != nil {
		return fileSum{}, err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	n, err := io.CopyBuffer(h, f, buf)
	return fileSum{crc: h.Sum32(), size: n}, err
}

// verifySeal reports whether dir holds exactly the files its seal lists,
// each with the listed size and checksum.
func verifySeal(dir string) bool {
	raw, err := os.ReadFile(filepath.Join(dir, sealFile))
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	if !sc.Scan() || sc.Text() != sealHeader {
		return false
	}
	want := map[string]bool{}
	for sc.Scan() {
		want[sc.Text()] = true
	}
	if len(want) == 0 {
		return false
	}
	got, err := sumDir(dir)
	if err != nil || len(got) != len(want) {
		return false
	}
	for _, s := range got {
		if !want[s.String()] {
			return false
		}
	}
	return true
}
