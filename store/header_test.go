package store

import (
	"strings"
	"testing"
)

func TestCheckHeader(t *testing.T) {
	good := make([]byte, 20)
	copy(good, "MAGICXYZ")
	good[9] = 7
	SealHeader(good, 12)
	for _, tc := range []struct {
		name    string
		b       []byte
		wantErr string
	}{
		{name: "sealed", b: good},
		{name: "empty", b: nil, wantErr: `bad magic "", want "MAGICXYZ"`},
		{name: "other magic", b: append([]byte("MAGICXYQ"), good[8:]...), wantErr: "bad magic"},
		{name: "no checksum", b: good[:15], wantErr: "header is 15 bytes, want at least 16"},
		{name: "changed field", b: append(append([]byte{}, good[:9]...), append([]byte{8}, good[10:]...)...), wantErr: "bad header checksum"},
	} {
		err := CheckHeader(tc.b, "MAGICXYZ", 12)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
		}
	}
}
