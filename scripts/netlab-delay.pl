#!/usr/bin/perl
# A TCP proxy that adds latency, for the network lab (scripts/netlab.sh delay): the kernel here
# has no netem.
#
#   perl scripts/netlab-delay.pl PORT TARGET:TPORT MEAN_MS JITTER_MS [LISTEN_ADDRESS]
#
# Listens on PORT (0: any free port) at LISTEN_ADDRESS (default: every address of the namespace
# it runs in; the tests on loopback pass 127.0.0.1), or, with PORT `fd:N`, accepts on the
# listening socket it inherited as file descriptor N (which may belong to another network
# namespace: scripts/netlab.sh publish); for each connection it connects
# to TARGET:TPORT and forwards both ways, holding every chunk it reads for MEAN ± JITTER ms
# (uniform) before writing it on. Order within a direction is kept (a chunk is never released
# before the one read before it), so a round trip through the proxy takes 2 × MEAN ± 2 × JITTER
# plus the network's own. A close is forwarded after the data before it. Prints
# "listening PORT" (the port bound) on standard output once it accepts connections; runs until killed.
# Only perl-base modules: nothing to install.
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;
use Time::HiRes qw(time);
use Errno qw(EAGAIN EWOULDBLOCK EINTR);
use POSIX ();

# A launcher may have started this process with signals blocked (Foundation's Process does):
# unblock them, so that SIGTERM stops the proxy.
POSIX::sigprocmask(POSIX::SIG_SETMASK(), POSIX::SigSet->new());

(@ARGV == 4 || @ARGV == 5) or die "usage: $0 PORT TARGET:TPORT MEAN_MS JITTER_MS [LISTEN_ADDRESS]\n";
my ($port, $target, $mean_ms, $jitter_ms, $listen_address) = @ARGV;
$listen_address //= '0.0.0.0';
$target =~ /^[^:]+:\d+$/ or die "TARGET:TPORT expected, got $target\n";
$jitter_ms <= $mean_ms or die "JITTER_MS must not exceed MEAN_MS\n";

my $listener;
if ($port =~ /^fd:(\d+)$/) {
    $listener = IO::Socket::INET->new_from_fd($1, 'r') or die "no listening socket on file descriptor $1: $!\n";
    $listener->blocking(0);
} else {
    $listener = IO::Socket::INET->new(
        LocalAddr => $listen_address, LocalPort => $port, Listen => 64, ReuseAddr => 1, Proto => 'tcp', Blocking => 0,
    ) or die "cannot listen on $port: $!\n";
}
$SIG{PIPE} = 'IGNORE';
$| = 1;
print "listening ", $listener->sockport, "\n";

# One direction of a connection: chunks waiting for their release time, then bytes waiting
# for the destination to take them.
#   { from => socket, to => socket, queue => [[release_time, data_or_undef_for_eof]...],
#     out => '', last_release => t, read_eof => 0, write_closed => 0 }
my @flows;

sub delay { ($mean_ms + (2 * rand() - 1) * $jitter_ms) / 1000 }

sub close_connection {
    my ($flow) = @_;
    for my $socket ($flow->{from}, $flow->{to}) {
        close $socket;
    }
    @flows = grep { $_->{from} != $flow->{from} && $_->{from} != $flow->{to} } @flows;
}

while (1) {
    my $now = time;
    my $readers = IO::Select->new($listener);
    my $writers = IO::Select->new;
    my $timeout = 1;
    for my $flow (@flows) {
        $readers->add($flow->{from}) unless $flow->{read_eof};
        # Release what is due.
        while (@{ $flow->{queue} } && $flow->{queue}[0][0] <= $now) {
            my (undef, $data) = @{ shift @{ $flow->{queue} } };
            if (defined $data) { $flow->{out} .= $data } else { $flow->{eof_due} = 1 }
        }
        if (length $flow->{out}) {
            $writers->add($flow->{to});
        } elsif ($flow->{eof_due} && !$flow->{write_closed}) {
            shutdown($flow->{to}, 1);
            $flow->{write_closed} = 1;
        }
        if (@{ $flow->{queue} }) {
            my $wait = $flow->{queue}[0][0] - $now;
            $timeout = $wait if $wait < $timeout;
        }
    }
    $timeout = 0 if $timeout < 0;
    my ($readable, $writable) = IO::Select->select($readers, $writers, undef, $timeout);
    $now = time;
    for my $socket (@{ $readable || [] }) {
        if ($socket == $listener) {
            my $client = $listener->accept or next;
            my $upstream = IO::Socket::INET->new(PeerAddr => $target, Proto => 'tcp', Timeout => 5);
            unless ($upstream) { close $client; next; }
            $_->blocking(0) for ($client, $upstream);
            for my $pair ([$client, $upstream], [$upstream, $client]) {
                push @flows, { from => $pair->[0], to => $pair->[1], queue => [], out => '', last_release => 0,
                    read_eof => 0, write_closed => 0, eof_due => 0 };
            }
            next;
        }
        my ($flow) = grep { $_->{from} == $socket } @flows or next;
        my $read = sysread($socket, my $data, 65536);
        if (!defined $read) {
            next if $! == EAGAIN || $! == EWOULDBLOCK || $! == EINTR;
            close_connection($flow);
            next;
        }
        my $release = $now + delay();
        $release = $flow->{last_release} if $release < $flow->{last_release};
        $flow->{last_release} = $release;
        if ($read == 0) {
            $flow->{read_eof} = 1;
            push @{ $flow->{queue} }, [$release, undef];
        } else {
            push @{ $flow->{queue} }, [$release, $data];
        }
    }
    for my $socket (@{ $writable || [] }) {
        my ($flow) = grep { $_->{to} == $socket && length $_->{out} } @flows or next;
        my $written = syswrite($socket, $flow->{out});
        if (!defined $written) {
            next if $! == EAGAIN || $! == EWOULDBLOCK || $! == EINTR;
            close_connection($flow);
            next;
        }
        substr($flow->{out}, 0, $written, '');
    }
    # A connection whose two directions are both closed is done.
    my %done;
    for my $flow (@flows) { $done{ $flow->{from} }++ if $flow->{write_closed} && !length $flow->{out} }
    for my $flow (@flows) {
        if ($done{ $flow->{from} } && $done{ $flow->{to} }) { close_connection($flow); last }
    }
}
