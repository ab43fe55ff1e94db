#!/bin/sh
# fuzz/seed_fuzz_lkst_text.sh CORPUS SRC BUILD - seed inputs for
# fuzz_lkst_text: maskset texts as `ktrace lkst read` prints them.
c=$1
printf '0x01 1\t# PROCESS_CONTEXTSWITCH -> DEFAULT\n0x02 1\n' > "$c/seed-recipe"
printf '# keep one task\nPROCESS_CONTEXTSWITCH pid_switch\nprocess_wakeup default\n' > "$c/seed-names"
printf '48 255\n0x31 NOTHING\r\n\n   \n# only a comment\n' > "$c/seed-nothing"
printf 'SYSCALL_ENTRY 1 extra\n' > "$c/seed-bad"
