package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// RunFileName is the file in the palace home that says where a running
// desk is: editors read it to open a card's page.
const RunFileName = "ui.json"

// runFile is RunFileName's content.
type runFile struct {
	// URL is the desk's address with its session token.
	URL      string `json:"url"`
	PID      int    `json:"pid"`
	Mode     string `json:"mode"`
	Worktree string `json:"worktree,omitempty"`
}

// WriteRunFile records in home that this process serves the desk at url
// (mode 0600: the URL carries the session token), and returns the function
// that removes the file again unless another desk has replaced it since.
func (s *Server) WriteRunFile(home string) (remove func(), err error) {
	f := runFile{URL: s.URL("/"), PID: os.Getpid(), Mode: string(s.h.Mode()), Worktree: s.h.Location().Worktree}
	b, _ := json.Marshal(f) // strings and a number
	path := filepath.Join(home, RunFileName)
	err = os.WriteFile(path+".tmp", b, 0o600)
	if err == nil {
		err = os.Rename(path+".tmp", path)
	}
	if err != nil {
		return func() {}, fmt.Errorf("write %s: %w", path, err)
	}
	return func() {
		var now runFile
		if raw, err := os.ReadFile(path); err == nil && json.Unmarshal(raw, &now) == nil && now.PID == f.PID && now.URL == f.URL {
			_ = os.Remove(path)
		}
	}, nil
}

// ErrNotRunning is returned by CardURL when no desk serves the home.
var ErrNotRunning = errors.New("no palace ui is running for this palace home: start one with `palace ui`")

// CardURL returns the address of card id's page on the desk running for
// home, with the session token, for an editor to open. It fails with
// ErrNotRunning when the home names no desk or the desk it names does not
// answer.
func CardURL(home, id string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(home, RunFileName))
	if errors.Is(err, os.ErrNotExist) {
		return "", ErrNotRunning
	}
	var f runFile
	if err == nil {
		err = json.Unmarshal(raw, &f)
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", RunFileName, err)
	}
	u, err := url.Parse(f.URL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return "", fmt.Errorf("read %s: %q is not the desk's address", RunFileName, f.URL)
	}
	// A desk that stopped without removing its file (killed) answers no more.
	c, err := net.DialTimeout("tcp", u.Host, 500*time.Millisecond)
	if err != nil {
		return "", ErrNotRunning
	}
	c.Close()
	u.Path = "/card/" + url.PathEscape(id)
	return u.String(), nil
}
