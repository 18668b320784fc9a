package archtest

import (
	"slices"
	"testing"
)

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

// lifecycleCore is the package below host that the lifecycle changes and
// the jobs built on them share; topJobs are the jobs that stand on it. The
// core must stay below them (it may not import a job), and a top job is
// host's to call: no other package below host may import one, or the
// layers would fold back into each other.
const lifecycleCore = "host/gatekeep"

var topJobs = []string{"host/teamsync", "host/intake"}

func TestLifecycleCoreStaysBelowTheJobs(t *testing.T) {
	root := moduleRoot(t)
	for _, pkg := range packagesUnder(t, root, "host") {
		if pkg == "host" || slices.Contains(topJobs, pkg) {
			continue
		}
		for _, imp := range imports(t, root, pkg) {
			for _, job := range topJobs {
				if imp == module+"/"+job {
					t.Errorf("%s imports %s: a job that stands on %s is host's to call; take what you need through your Config", pkg, job, lifecycleCore)
				}
			}
		}
	}
	var users int
	for _, job := range topJobs {
		if slices.Contains(imports(t, root, job), module+"/"+lifecycleCore) {
			users++
		}
	}
	if users != len(topJobs) {
		t.Errorf("%d of %v import %s, want all: they evaluate the gate through the one core", users, topJobs, lifecycleCore)
	}
}
