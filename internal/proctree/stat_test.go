package proctree

import (
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The numbers after the ppid, as the kernel writes them for a sleeping
// shell; the parsers read none of them.
const statTail = " 1 1 0 -1 4194560 1105 0 0 0 3 1 0 0 20 0 1 0 531903 4562944 896 18446744073709551615 1 1 0 0 0 0 65536 4 65538 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       Stat
	}{
		{"a shell", "7 (sh) S 1" + statTail, Stat{PID: 7, PPID: 1, Comm: "sh", State: 'S'}},
		{"a name with \") (\" and a number in it", "4242 (x) (y 1 2) S 41" + statTail,
			Stat{PID: 4242, PPID: 41, Comm: "x) (y 1 2", State: 'S'}},
		{"a name that is \")\"", "9 ()) R 8" + statTail, Stat{PID: 9, PPID: 8, Comm: ")", State: 'R'}},
		{"a name with spaces, truncated to 15 bytes", "31 (Web Content x) S 2" + statTail,
			Stat{PID: 31, PPID: 2, Comm: "Web Content x", State: 'S'}},
		{"a kernel thread", "23 (kworker/1:0-events) I 2" + statTail,
			Stat{PID: 23, PPID: 2, Comm: "kworker/1:0-events", State: 'I'}},
		{"a zombie", "120 (true) Z 119" + statTail, Stat{PID: 120, PPID: 119, Comm: "true", State: 'Z'}},
		{"PID 1 of a namespace: its parent is outside", "1 (proxy-await) S 0" + statTail,
			Stat{PID: 1, PPID: 0, Comm: "proxy-await", State: 'S'}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tc.text))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseStatRefuses(t *testing.T) {
	for _, text := range []string{
		"",                    // read as the process went
		"7 sh S 1" + statTail, // no parentheses
		"7 (sh",               // cut in the name
		"7 (sh) S",            // cut before the ppid
		"(sh) S 1" + statTail,
		"7 (sh) S x" + statTail,
		"7 (sh) Sleeping 1" + statTail,
	} {
		_, err := ParseStat([]byte(text))
		assert.Error(t, err, "%q", text)
	}
}

// status is the text of /proc/PID/status up to the SigCgt line, with the
// lines the kernel writes between; no NSpid line where nspid is "", as on
// a kernel without PID namespaces.
func status(name, state, ppid, uid, nspid, sigcgt string) string {
	if nspid != "" {
		nspid = "NSpid:\t" + nspid + "\n"
	}
	return "Name:\t" + name + "\nUmask:\t0022\nState:\t" + state + "\nTgid:\t812\nNgid:\t0\nPid:\t812\n" +
		"PPid:\t" + ppid + "\nTracerPid:\t0\nUid:\t" + uid + "\nGid:\t101\t101\t101\t101\nFDSize:\t64\n" +
		"Groups:\t101 \nNStgid:\t812\n" + nspid + "VmPeak:\t    9352 kB\n" +
		"SigIgn:\t0000000000001000\nSigCgt:\t" + sigcgt + "\n"
}

// caught is the SigCgt mask of the signals sigs.
func caught(sigs ...syscall.Signal) uint64 {
	var m uint64
	for _, s := range sigs {
		m |= 1 << (s - 1)
	}
	return m
}

// sleepStatus is the whole of /proc/PID/status for a sleep(1), as the
// kernel writes it.
const sleepStatus = "Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t3384\nNgid:\t0\nPid:\t3384\n" +
	"PPid:\t3382\nTracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t256\nGroups:\t \n" +
	"NStgid:\t3384\nNSpid:\t3384\nNSpgid:\t3382\nNSsid:\t11243\nKthread:\t0\n" +
	"VmPeak:\t    2920 kB\nVmSize:\t    2920 kB\nVmLck:\t       0 kB\nVmPin:\t       0 kB\n" +
	"VmHWM:\t    1796 kB\nVmRSS:\t    1796 kB\nRssAnon:\t     112 kB\nRssFile:\t    1684 kB\n" +
	"RssShmem:\t       0 kB\nVmData:\t     224 kB\nVmStk:\t     132 kB\nVmExe:\t      20 kB\n" +
	"VmLib:\t    1528 kB\nVmPTE:\t      44 kB\nVmSwap:\t       0 kB\nHugetlbPages:\t       0 kB\n" +
	"CoreDumping:\t0\nTHP_enabled:\t1\nuntag_mask:\t0xffffffffffffffff\nThreads:\t1\nSigQ:\t3/96365\n" +
	"SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n" +
	"SigIgn:\t0000000000000006\nSigCgt:\t0000000000000000\nCapInh:\t0000000000000000\n" +
	"CapPrm:\t000001fffeffffff\nCapEff:\t000001fffeffffff\nCapBnd:\t000001fffeffffff\n" +
	"CapAmb:\t0000000000000000\nNoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n" +
	"Speculation_Store_Bypass:\tvulnerable\nSpeculationIndirectBranch:\talways enabled\n" +
	"Cpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed:\t00000000,00000001\nMems_allowed_list:\t0\n" +
	"voluntary_ctxt_switches:\t1\nnonvoluntary_ctxt_switches:\t0\n"

func TestParseStatus(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       Status
	}{
		{"a server that dropped to its user", status("nginx", "S (sleeping)", "811", "0\t101\t101\t101", "812", "0000000018004a02"),
			Status{State: 'S', PPID: 811, UIDs: [4]uint32{0, 101, 101, 101}, NSpid: []int{812},
				Caught: caught(syscall.SIGINT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTERM, syscall.SIGWINCH, syscall.SIGIO)}},
		{"a name with a newline, escaped, and a Uid: in it", status(`x\nUid:\t7\t7\t7\t7`, "R (running)", "1", "1000\t1000\t1000\t1000", "812", "0000000000000000"),
			Status{State: 'R', PPID: 1, UIDs: [4]uint32{1000, 1000, 1000, 1000}, NSpid: []int{812}}},
		{"a zombie", status("true", "Z (zombie)", "811", "0\t0\t0\t0", "812", "0000000000000000"),
			Status{State: 'Z', PPID: 811, NSpid: []int{812}}},
		{"a nobody", status("sleep", "S (sleeping)", "0", "65534\t65534\t65534\t65534", "812", "0000000000000000"),
			Status{State: 'S', UIDs: [4]uint32{65534, 65534, 65534, 65534}, NSpid: []int{812}}},
		{"PID 1 of a PID namespace two deep", status("proxy-await", "S (sleeping)", "0", "0\t0\t0\t0", "812\t40\t1", "fffffffe7ffbfeff"),
			Status{State: 'S', NSpid: []int{812, 40, 1}, Caught: 0xfffffffe7ffbfeff}},
		{"a kernel without PID namespaces", status("sh", "S (sleeping)", "1", "0\t0\t0\t0", "", "0000000000010002"),
			Status{State: 'S', PPID: 1, Caught: caught(syscall.SIGINT, syscall.SIGCHLD)}},
		{"a whole file, with the memory lines", sleepStatus,
			Status{State: 'S', PPID: 3382, NSpid: []int{3384},
				Memory: Memory{PeakKB: 1796, RSSKB: 1796, AnonKB: 112, FileKB: 1684}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStatus([]byte(tc.text))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseStatusRefuses(t *testing.T) {
	for _, text := range []string{
		"",                                  // read as the process went
		"Name:\tsh\nState:\tS (sleeping)\n", // cut
		status("sh", "", "1", "0\t0\t0\t0", "812", "0000000000000000"),
		status("sh", "S (sleeping)", "x", "0\t0\t0\t0", "812", "0000000000000000"),
		status("sh", "S (sleeping)", "1", "0\t0\t0", "812", "0000000000000000"),
		status("sh", "S (sleeping)", "1", "0\t0\t0\t-1", "812", "0000000000000000"),
		status("sh", "S (sleeping)", "1", "0\t0\t0\t0", " ", "0000000000000000"),
		status("sh", "S (sleeping)", "1", "0\t0\t0\t0", "812\t1x", "0000000000000000"),
		status("sh", "S (sleeping)", "1", "0\t0\t0\t0", "812", "000000000000000g"),
		status("sh", "S (sleeping)", "1", "0\t0\t0\t0", "812", "10000000000000000"), // 65 signals
		strings.Replace(sleepStatus, "VmRSS:\t    1796 kB", "VmRSS:\t    1796", 1),
		strings.Replace(sleepStatus, "RssAnon:\t     112 kB", "RssAnon:\t     1 MB", 1),
		strings.Replace(sleepStatus, "RssFile:\t    1684 kB", "RssFile:\t    -1x kB", 1),
	} {
		_, err := ParseStatus([]byte(text))
		assert.Error(t, err, "%q", text)
	}
}
