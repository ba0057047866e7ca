/*
 * commands.h: the subcommands of the xqz multi-tool. Each lives in its own cmd_<name>.c,
 * takes the arguments after its name (argv[0] is the subcommand name) and returns the
 * process exit status: 0 success, 1 failure, 2 bad usage.
 */
#ifndef XQZ_COMMANDS_H
#define XQZ_COMMANDS_H

int xqz_cmd_perft(int argc, char **argv);
int xqz_cmd_bench(int argc, char **argv);
int xqz_cmd_net(int argc, char **argv);
int xqz_cmd_arena(int argc, char **argv);
int xqz_cmd_engine(int argc, char **argv);
int xqz_cmd_play(int argc, char **argv);
int xqz_cmd_selfplay(int argc, char **argv);
int xqz_cmd_explain(int argc, char **argv);
int xqz_cmd_status(int argc, char **argv);
int xqz_cmd_promotions(int argc, char **argv);
int xqz_cmd_population(int argc, char **argv);
int xqz_cmd_games(int argc, char **argv);
int xqz_cmd_games_export(int argc, char **argv); /* `xqz games export` */
int xqz_cmd_version(int argc, char **argv);
int xqz_cmd_keygen(int argc, char **argv);
int xqz_cmd_join(int argc, char **argv);
int xqz_cmd_ban(int argc, char **argv);
int xqz_cmd_unban(int argc, char **argv);
int xqz_cmd_enrol_token(int argc, char **argv);
int xqz_bench_movegen(int argc, char **argv);
int xqz_bench_nn(int argc, char **argv);
int xqz_bench_selfplay(int argc, char **argv);
int xqz_bench_coordinator(int argc, char **argv);
int xqz_bench_train(int argc, char **argv);

#endif
