//go:build unix

package repofs

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// OpenFile opens rel below root like os.OpenFile, refusing a link in any
// component (*LinkError); with os.O_CREATE missing directories are made
// (0755). It must be a regular file (else ErrNotRegular), opened
// non-blocking first so a planted FIFO cannot hang palace.
func OpenFile(root, rel string, flag int, perm os.FileMode) (*os.File, error) {
	dir, name, path, err := openParent(root, rel, flag&os.O_CREATE != 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dir)
	fd, err := openat(dir, name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, uint32(perm.Perm()))
	if err != nil {
		return nil, refine(dir, name, path, "open", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w: palace writes only regular files inside a repository; remove it and run again", path, ErrNotRegular)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// WriteFileAtomic replaces rel below root with b by a rename, so a reader
// sees the old file or the new one. No component, rel included, may be a
// link. An existing file keeps its permissions; a new one gets perm.
func WriteFileAtomic(root, rel string, b []byte, perm os.FileMode) error {
	dir, name, path, err := openParent(root, rel, false)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	switch err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == unix.ENOENT:
	case err != nil:
		return &os.PathError{Op: "stat", Path: path, Err: err}
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return &LinkError{Path: path, Target: readlinkat(dir, name)}
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("%s: %w: palace writes only regular files inside a repository", path, ErrNotRegular)
	default:
		perm = os.FileMode(st.Mode & 0o777)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := "." + name + "." + hex.EncodeToString(rnd[:]) + ".tmp"
	fd, err := openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return &os.PathError{Op: "create", Path: filepath.Join(filepath.Dir(path), tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(filepath.Dir(path), tmp))
	_, werr := f.Write(b)
	if werr == nil {
		// The umask may have narrowed perm at creation.
		werr = f.Chmod(perm.Perm())
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		if err := unix.Renameat(dir, tmp, dir, name); err != nil {
			werr = &os.PathError{Op: "rename", Path: path, Err: err}
		}
	}
	if werr != nil {
		_ = unix.Unlinkat(dir, tmp, 0)
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

// MkdirAll creates the directory rel below root and missing parents (0755),
// refusing a link (*LinkError) or non-directory among rel's components.
func MkdirAll(root, rel string) error {
	comps, err := split(root, rel)
	if err != nil {
		return err
	}
	fd, err := openDirs(root, comps, true)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

// openParent opens rel's directory as openDirs does, returning it, rel's
// last component and the whole path.
func openParent(root, rel string, create bool) (dir int, name, path string, err error) {
	comps, err := split(root, rel)
	if err != nil {
		return -1, "", "", err
	}
	dir, err = openDirs(root, comps[:len(comps)-1], create)
	return dir, comps[len(comps)-1], filepath.Join(root, filepath.Join(comps...)), err
}

// openDirs opens the trusted root, then each of comps without following
// links (made when missing and create is set), returning the last.
func openDirs(root string, comps []string, create bool) (int, error) {
	fd, err := openat(unix.AT_FDCWD, root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: root, Err: err}
	}
	path := root
	for _, c := range comps {
		path = filepath.Join(path, c)
		next, err := openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT && create {
			if err = unix.Mkdirat(fd, c, 0o755); err == nil || err == unix.EEXIST {
				next, err = openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		if err != nil {
			err = refine(fd, c, path, "open", err)
			unix.Close(fd)
			return -1, err
		}
		unix.Close(fd)
		fd = next
	}
	return fd, nil
}

// refine turns a failed open into a *LinkError when name is a link (errno
// varies by system, so the entry is looked at), else an *os.PathError.
func refine(dir int, name, path, op string, err error) error {
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return &LinkError{Path: path, Target: readlinkat(dir, name)}
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

func readlinkat(dir int, name string) string {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(dir, name, buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

// openat retries on EINTR, as os.OpenFile does.
func openat(dir int, name string, flag int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flag, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// Remove deletes the regular file rel below root; no component may be a
// link, or the removal could land outside the repository.
func Remove(root, rel string) error {
	dir, name, path, err := openParent(root, rel, false)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return &LinkError{Path: path, Target: readlinkat(dir, name)}
	case unix.S_IFREG:
	default:
		return fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	if err := unix.Unlinkat(dir, name, 0); err != nil {
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}
