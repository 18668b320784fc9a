package archtest

import "testing"

// TestHostSubpackagesDoNotImportHost keeps host a façade on top: the
// packages below it (the pack pipeline, the mailbox front end, research,
// adoption, …) get what they need of a palace through a Config that host
// fills in, so none of them may import host itself.
func TestHostSubpackagesDoNotImportHost(t *testing.T) {
	root := moduleRoot(t)
	checked := 0
	for _, pkg := range packagesUnder(t, root, "host") {
		if pkg == "host" {
			continue
		}
		checked++
		for _, imp := range imports(t, root, pkg) {
			if imp == module+"/host" {
				t.Errorf("%s imports host: take what it needs through its Config (host fills it in), so host stays the façade on top", pkg)
			}
		}
	}
	if checked < 8 {
		t.Fatalf("found %d packages below host, want at least 8 (pack, mail, mailbox, research, adoption, …)", checked)
	}
}
