public enum RankingsKitVersion { public static let string = "0.4.0" }
