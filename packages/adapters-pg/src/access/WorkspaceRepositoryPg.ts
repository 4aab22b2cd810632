import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { WorkspaceRepository, Member, Membership, Role, User } from "@podium/domain/access"
import { WorkspaceId } from "@podium/domain/shared"
import { ChangeFeed } from "../ChangeFeedPg.ts"
import { Timestamp, toDate } from "../Rows.ts"

const MembershipRow = Schema.Struct({ ...Membership.fields, joined_at: Timestamp })
const MemberRow = Schema.Struct({ ...Member.fields, joined_at: Timestamp })
const MemberWorkspaceRow = Schema.Struct({
  workspace_id: WorkspaceId,
  name: Schema.String,
  role: Role,
  personal: Schema.Boolean,
  joined_at: Timestamp
})
const UserRow = Schema.Struct(User.fields)
const Pair = Schema.Struct({ workspaceId: Schema.String, userId: Schema.String })

const layer = Layer.effect(
  WorkspaceRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Every session request reads its user and memberships: keep copies (users by subject, tagged by
    // id; a user's memberships by user id), dropped on every announced change and by writes here.
    const feed = yield* ChangeFeed
    const users = feed.copies<User>("user", { tagOf: (user) => user.id })
    const membershipCopies = feed.copies<{ readonly userId: string; readonly rows: ReadonlyArray<Membership> }>(
      "membership",
      { tagOf: (copy) => copy.userId }
    )

    const findUser = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: UserRow,
      execute: (subject) => sql`SELECT id, subject, email FROM users WHERE subject = ${subject}`
    })
    const usersById = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: UserRow,
      execute: (ids) => sql`SELECT id, subject, email FROM users WHERE id = ANY(${[...ids]}::uuid[])`
    })
    const memberships = SqlSchema.findAll({
      Request: Schema.String,
      Result: MembershipRow,
      execute: (userId) =>
        sql`SELECT m.workspace_id, m.user_id, m.role, (w.personal_owner_id = m.user_id) IS TRUE AS personal, m.joined_at
            FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
            WHERE m.user_id = ${userId} ORDER BY m.joined_at`
    })
    const workspacesOf = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, after: Schema.NullOr(Schema.String), limit: Schema.Number }),
      Result: MemberWorkspaceRow,
      execute: ({ after, limit, userId }) =>
        sql`SELECT m.workspace_id, w.name, m.role, (w.personal_owner_id = m.user_id) IS TRUE AS personal, m.joined_at
            FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
            WHERE m.user_id = ${userId} AND (${after}::uuid IS NULL OR m.workspace_id > ${after}::uuid)
            ORDER BY m.workspace_id LIMIT ${limit}`
    })
    const members = SqlSchema.findAll({
      Request: Schema.String,
      Result: MemberRow,
      execute: (workspaceId) =>
        sql`SELECT m.user_id, u.email, m.role, m.joined_at
            FROM memberships m JOIN users u ON u.id = m.user_id
            WHERE m.workspace_id = ${workspaceId} ORDER BY m.joined_at, m.user_id`
    })
    const findMember = SqlSchema.findOneOption({
      Request: Pair,
      Result: MemberRow,
      execute: ({ userId, workspaceId }) =>
        sql`SELECT m.user_id, u.email, m.role, m.joined_at
            FROM memberships m JOIN users u ON u.id = m.user_id
            WHERE m.workspace_id = ${workspaceId} AND m.user_id = ${userId}`
    })
    const findMemberByEmail = SqlSchema.findOneOption({
      Request: Schema.Struct({ workspaceId: Schema.String, email: Schema.String }),
      Result: MemberRow,
      execute: ({ email, workspaceId }) =>
        sql`SELECT m.user_id, u.email, m.role, m.joined_at
            FROM memberships m JOIN users u ON u.id = m.user_id
            WHERE m.workspace_id = ${workspaceId} AND lower(u.email) = lower(${email})`
    })

    return WorkspaceRepository.of({
      findUserBySubject: (subject) =>
        users.get(subject, findUser(subject).pipe(Effect.map(Option.map((row) => new User(row))), Effect.orDie)),
      createUser: (user, workspaceId, now) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO users (id, subject, email, created_at, last_seen_at)
                     VALUES (${user.id}, ${user.subject}, ${user.email}, ${toDate(now)}, ${toDate(now)})`
          yield* sql`INSERT INTO workspaces (id, name, personal_owner_id, created_at)
                     VALUES (${workspaceId}, ${user.email ?? "Personal workspace"}, ${user.id}, ${toDate(now)})`
          yield* sql`INSERT INTO memberships (workspace_id, user_id, role, joined_at)
                     VALUES (${workspaceId}, ${user.id}, 'owner', ${toDate(now)})`
        })).pipe(
          // Two first requests of one subject race here; the loser's user already exists.
          Effect.catchReason("SqlError", "UniqueViolation", () => Effect.void),
          Effect.orDie,
          Effect.ensuring(Effect.sync(() => membershipCopies.drop(user.id)))
        ),
      touchUser: (userId, email, now) =>
        sql`UPDATE users SET email = ${email}, last_seen_at = ${toDate(now)} WHERE id = ${userId}`.pipe(
          Effect.asVoid,
          Effect.orDie,
          Effect.ensuring(Effect.sync(() => users.drop(userId)))
        ),
      findUsers: (ids) =>
        ids.length === 0
          ? Effect.succeed([])
          : usersById(ids).pipe(Effect.map((rows) => rows.map((row) => new User(row))), Effect.orDie),
      memberships: (userId) =>
        membershipCopies.get(
          userId,
          memberships(userId).pipe(
            Effect.map((rows) => Option.some({ userId, rows: rows.map((r) => new Membership(r)) })),
            Effect.orDie
          )
        ).pipe(Effect.map((copy) => Option.isSome(copy) ? copy.value.rows : [])),
      workspacesOf: (userId, page) =>
        workspacesOf({ userId, after: page.after ?? null, limit: page.limit }).pipe(Effect.orDie),
      members: (workspaceId) =>
        members(workspaceId).pipe(Effect.map((rows) => rows.map((r) => new Member(r))), Effect.orDie),
      findMember: (workspaceId, userId) =>
        findMember({ workspaceId, userId }).pipe(Effect.map(Option.map((row) => new Member(row))), Effect.orDie),
      findMemberByEmail: (workspaceId, email) => findMemberByEmail({ workspaceId, email }).pipe(Effect.map(Option.map((row) => new Member(row))), Effect.orDie),
      addMember: (workspaceId, userId, role, now) =>
        sql`INSERT INTO memberships (workspace_id, user_id, role, joined_at)
            VALUES (${workspaceId}, ${userId}, ${role}, ${toDate(now)}) ON CONFLICT DO NOTHING`.pipe(
          Effect.asVoid,
          Effect.orDie,
          Effect.ensuring(Effect.sync(() => membershipCopies.drop(userId)))
        ),
      findWorkspace: (by) =>
        ("id" in by
          ? sql<{ id: WorkspaceId }>`SELECT id FROM workspaces WHERE id::text = ${by.id}`
          : sql<{ id: WorkspaceId }>`SELECT w.id FROM workspaces w JOIN users u ON u.id = w.personal_owner_id
                                     WHERE lower(u.email) = lower(${by.ownerEmail})`).pipe(
          Effect.map((rows) => Option.fromNullishOr(rows[0]?.id)),
          Effect.orDie
        ),
      removeMember: (workspaceId, userId) =>
        sql`DELETE FROM memberships WHERE workspace_id = ${workspaceId} AND user_id = ${userId} RETURNING user_id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie,
          Effect.ensuring(Effect.sync(() => membershipCopies.drop(userId)))
        )
    })
  })
)

export const WorkspaceRepositoryPg = { layer }
