package external

import (
	"sync"
	"syscall"
)

// groups are the process groups of the programs running now, in every
// Command of the process, by their leader's pid (= the group's id).
var groups = struct {
	sync.Mutex
	m map[int]bool
}{m: map[int]bool{}}

func addGroup(pid int) {
	groups.Lock()
	groups.m[pid] = true
	groups.Unlock()
}

func dropGroup(pid int) {
	groups.Lock()
	delete(groups.m, pid)
	groups.Unlock()
}

// KillGroups kills (SIGKILL) the process group of every program that a
// Command of this process runs now, the processes those programs started
// included, and returns how many groups it signalled. It is for a process
// about to exit at once (a second SIGINT): a caller that can wait closes
// its Commands, or cancels their evaluations' contexts, instead.
func KillGroups() int {
	groups.Lock()
	defer groups.Unlock()
	n := 0
	for pid := range groups.m {
		if syscall.Kill(-pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}
