#!/bin/sh
# tests/kft_spawn.sh - programs started with an environment of their own
# are traced (lib/preload/exec.c, issue 25 item 4): tests/kft/spawner.c
# starts itself as a child through posix_spawn, posix_spawnp, execve (after
# fork and after vfork), execle, execvpe and fexecve, each with the envp
# {"SPAWNER=1"}, and once with a LD_PRELOAD of its own in it.  Before, the
# child lost LD_PRELOAD and the session's variables: it ran untraced.
#
# Expected answers from the program itself: the child prints "child 3"
# after 3 calls of leaf() and exits 4 unless it got SPAWNER=1 (its
# environment must be the one given, plus the session); the parent calls
# parent_work() once.  The child's image is recorded beside the parent's
# trace (DIR.exec-PID-1, as any exec'd image), its counts main 1, leaf 3.
# uftrace 0.13 agrees on the whole session for posix_spawn and vfork+execve
# (main 2, leaf 3, parent_work 1); it does not wrap execle, so it is not
# the reference there.  Built five ways (KFT_BUILDS: -finstrument-functions
# and -pg at -O0 and -O2, -pg -mfentry at -O2).
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
san_preload
KTRACE_LIBCALL=0 # the program's own calls
export KTRACE_LIBCALL

SRC="$KTRACE_SRC/tests/kft/spawner.c"
for b in $KFT_BUILDS; do
	# shellcheck disable=SC2046
	cc -g $(hook_flags "$b") -o "sp-$b" "$SRC" || exit 1
done

# name count per function, sorted, one line
counts() {
	"$KTRACE" kd --format=csv "$1" | awk -F, 'NR > 1 { print $1, $2 }' | sort | paste -sd' '
}

for b in $KFT_BUILDS; do
	for how in posix_spawn posix_spawnp execve execle execvpe fexecve vfork spawn-preload; do
		rm -rf tr tr.exec-*
		"$KTRACE" record -q -o tr "./sp-$b" "$how" >out 2>err
		rc=$?
		is "$rc:$(paste -sd' ' out)" "0:parent child 3" "$b $how: output and status unchanged (the child had its envp)"
		is "$(counts tr)" "main 1 parent_work 1" "$b $how: the parent's calls"
		set -- tr.exec-*
		if [ $# -eq 1 ] && [ -d "$1" ]; then
			is "$(counts "$1")" "leaf 3 main 1" "$b $how: the child is traced: its calls beside the parent's trace"
		else
			ok 1 "$b $how: the child is traced: its calls beside the parent's trace (found: $*)"
		fi
		if [ "$how" = spawn-preload ]; then
			like err "nonexistent-preload\.so" "$b $how: the program's own LD_PRELOAD reached the child (ld.so names it)"
		fi
	done
done

# uftrace on the same binaries: the session's counts, parent and child together
for how in posix_spawn vfork; do
	rm -rf u tr tr.exec-*
	env -u LD_PRELOAD uftrace record --no-libcall -d u ./sp-inst-O2 "$how" >/dev/null 2>&1
	want=$(uftrace report -d u -f call --no-pager 2>/dev/null | tail -n +3 |
		awk '$2 !~ /^linux:/ { print $2, $1 }' | sort | paste -sd' ')
	"$KTRACE" record -q -o tr ./sp-inst-O2 "$how" >/dev/null 2>&1
	got=$( (counts tr; counts tr.exec-*) | tr ' ' '\n' | paste - - |
		awk '{ n[$1] += $2 } END { for (f in n) print f, n[f] }' | sort | paste -sd' ')
	is "$got" "$want" "$how: the session's counts equal uftrace's ($want)"
done

# the call trees (thread, recorded depth, function, library calls included)
# equal uftrace's, the child's exec'd image beside the parent's (execve,
# which never returns, is left out: ktrace writes a call at its return);
# uftrace misses the child of execle and puts fexecve's new image under
# frames it never had, so those two are not compared with it (the counts
# above are the program's).
# vfork: the parent's vfork() call, the child's return from it and the
# child's own calls before it execs or exits, under the child's tid
# (vfork-work: child_prep() with two leaf() and getppid(), then execve;
# vfork-exit: then _exit; vfork-fail: then an execve that fails, strcmp
# and _exit), in the five builds; the parent's calls after the child
# (waitpid, parent_work) at its own depth.  Before, the child's calls were
# not recorded at all.  uftrace is wrong after the failed execve: it takes
# its return for main's and shows the child's next call (strcmp, in main)
# at depth 0; the test puts it back at depth 1.
TREE="$KTRACE_SRC/tests/helpers/calltree.py"
for b in $KFT_BUILDS; do
	for how in posix_spawn posix_spawnp execve execvpe vfork vfork-work vfork-exit vfork-fail; do
		rm -rf u tr tr.exec-*
		KTRACE_LIBCALL=1 "$KTRACE" record -q -o tr "./sp-$b" "$how" >out 2>&1
		rc=$?
		want="parent child 3"
		case $how in vfork-exit | vfork-fail) want=parent ;; esac
		is "$rc:$(paste -sd' ' out)" "0:$want" "$b $how: output and exit status as untraced"
		for d in tr tr.exec-*; do [ ! -d "$d" ] || "$KTRACE" kd -c --format=csv "$d"; done |
			python3 "$TREE" ktrace-csv --drop execve >k.tree
		# uftrace 0.13 is not deterministic on a vfork child: now and then
		# (1 run in 50 here) it loses the child's inherited depth and shows
		# its calls one level up; so up to 3 uftrace runs, one must agree
		for try in 1 2 3; do
			rm -rf u
			env -u LD_PRELOAD KTRACE_LIBCALL=1 uftrace record -d u "./sp-$b" "$how" >/dev/null 2>&1
			uftrace replay -d u --no-pager 2>/dev/null | python3 "$TREE" uftrace --drop execve >u.tree
			[ "$how" = vfork-fail ] && sed -i '$s/^0 strcmp$/1 strcmp/' u.tree
			! cmp -s u.tree k.tree || break
		done
		ok "$([ -s u.tree ] && cmp -s u.tree k.tree; echo $?)" \
			"$b $how: the call tree, parent and child, equals uftrace's"
		cmp -s u.tree k.tree || diff u.tree k.tree | sed "s/^/#   $b $how: /" | head -20 >&2
	done
done

done_testing
