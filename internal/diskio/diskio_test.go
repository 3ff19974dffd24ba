package diskio

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want Counts
		ok   bool
	}{
		{"linux", "rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\nread_bytes: 4096\nwrite_bytes: 12288\ncancelled_write_bytes: 4096\n", Counts{Read: 4096, Written: 8192}, true},
		{"no cancelled line", "read_bytes: 1\nwrite_bytes: 2\n", Counts{Read: 1, Written: 2}, true},
		{"cancelled above written", "read_bytes: 1\nwrite_bytes: 2\ncancelled_write_bytes: 9\n", Counts{Read: 1}, true},
		{"no write_bytes", "rchar: 1\nread_bytes: 5\n", Counts{}, false},
		{"garbage", "read_bytes: x\nwrite_bytes: -3\n", Counts{}, false},
		{"empty", "", Counts{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parse([]byte(tc.text))
			if got != tc.want || ok != tc.ok {
				t.Errorf("parse = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestSize(t *testing.T) {
	for _, tc := range []struct {
		b    int64
		want string
	}{
		{0, "0 B"}, {999, "999 B"}, {1000, "1 kB"}, {1500, "1.5 kB"}, {999_499, "999 kB"},
		{999_500, "1 MB"}, {23_400_000, "23.4 MB"}, {2_830_000_000_000, "2.83 TB"}, {-2048, "-2.05 kB"},
	} {
		if got := Size(tc.b); got != tc.want {
			t.Errorf("Size(%d) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
