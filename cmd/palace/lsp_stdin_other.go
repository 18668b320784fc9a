//go:build !unix

package main

import "io"

// pollableStdin returns r: outside Unix a blocked stdin read ends when the
// editor closes the pipe.
func pollableStdin(r io.Reader) io.Reader { return r }
