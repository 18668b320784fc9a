package finding

import "testing"

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		sev  Severity
		want string
	}{
		{Error, "a/b.md:3:7: PC001 bad yaml"},
		{Warning, "a/b.md:3:7: PC001 warning: bad yaml"},
	} {
		if got := Format("a/b.md", 3, 7, "PC001", tc.sev, "bad yaml"); got != tc.want {
			t.Errorf("Format(%s) = %q, want %q", tc.sev, got, tc.want)
		}
	}
}
