package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedCodeIsCurrent regenerates the policies package's codecs into
// a temporary folder and compares them with the committed codec_gen.go.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	src, err := Generate("../..")
	if err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(t.TempDir(), "codec_gen.go")
	if err := os.WriteFile(fresh, src, 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../codec_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("policies/codec_gen.go is not what the types generate: run `go generate ./policies`")
	}
}

// TestGeneratedCodeIsMarked holds the generated file to the header that
// tools (go vet, staticcheck, editors) recognize.
func TestGeneratedCodeIsMarked(t *testing.T) {
	src, err := Generate("../..")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(src, []byte("// Code generated ")) || !bytes.Contains(src[:bytes.IndexByte(src, '\n')], []byte("DO NOT EDIT.")) {
		t.Errorf("header is %q", src[:bytes.IndexByte(src, '\n')])
	}
}
