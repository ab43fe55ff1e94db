#!/bin/sh
# fuzz/seed_fuzz_kft_config.sh CORPUS SRC OUT - seed the KFT configuration
# parser's corpus with the sample configurations (fuzz/corpus/kft_config:
# the seed's Appendix A samples and a block using every statement).
set -e
cp "$2"/fuzz/corpus/kft_config/*.conf "$1"/
